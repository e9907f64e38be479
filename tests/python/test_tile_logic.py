"""Python's `and` / `or` / `not` of tiles is named with its file and line, by the analysis and in
a task's warnings under the interpreter; the same operators over scalars are not."""

import json
import os
import shutil
import sys

import triton

from conftest import FIXTURES
from tforge_worker import load_task
from tforge_worker.analyze import analyze

PATH = os.path.join(FIXTURES, "tile_logic.py")


def _line(text):
    with open(PATH) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _findings(name):
    kernel = next(k for k in analyze(PATH)["kernels"] if k["name"] == name)
    return [(t["op"], t["span"]["line"], t["text"]) for t in kernel["tile_logic"]]


def test_tile_masks_joined_by_and_or_are_found():
    assert _findings("copy_rows") == [
        ("and", _line("mask = (rows"), "(rows[:, None] < M) and (cols[None, :] < N)")]
    # the helper's `mask` is a tile because copy_rows passes one
    assert _findings("_load_masked") == [("or", _line("mask or (offs < 0)"),
                                          "mask or (offs < 0)")]


def test_the_note_names_the_file_the_line_and_the_fix():
    kernel = next(k for k in analyze(PATH)["kernels"] if k["name"] == "copy_rows")
    note = kernel["tile_logic"][0]["note"]
    assert note.startswith(f"{PATH}:{_line('mask = (rows')}: `(rows[:, None] < M) and")
    assert "CPU interpreter (TRITON_INTERPRET=1)" in note
    assert "a check on the CPU is unreliable here" in note
    assert "write `&`, which is what the kernel means on the GPU" in note


def test_scalars_joined_by_and_or_not_are_not_found():
    assert _findings("scalar_flags") == []


def test_questions_about_types_are_not_tiles(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                    "def k(x_ptr, n, FLAG: tl.constexpr, B: tl.constexpr):\n"
                    "    offs = tl.arange(0, B)\n"
                    "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
                    "    if x_ptr.dtype.element_ty.is_fp16() and FLAG:\n"
                    "        x = x * 2\n"
                    "    if FLAG and x.dtype.is_floating():\n"
                    "        x = x * 3\n"
                    "    tl.store(x_ptr + offs, x, mask=offs < n)\n")
    assert analyze(str(path))["kernels"][0]["tile_logic"] == []


def test_a_not_and_a_chain_of_tiles_are_found(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                    "def k(x_ptr, n, B: tl.constexpr):\n"
                    "    offs = tl.arange(0, B)\n"
                    "    tl.store(x_ptr + offs, 1.0, mask=not (offs >= n))\n"
                    "    tl.store(x_ptr + offs, 2.0, mask=0 <= offs < n)\n")
    doc = analyze(str(path))
    assert [(t["op"], t["span"]["line"]) for t in doc["kernels"][0]["tile_logic"]] == \
        [("not", 8), ("chain", 9)]


def _task(tmp_path, kernel, reference, args):
    shutil.copy(PATH, tmp_path / "tile_logic.py")
    doc = {
        "source": "tile_logic.py", "kernel": kernel,
        "inputs": [{"name": "x", "shape": ["M", "N"], "dtype": "float32", "init": "randn"},
                   {"name": "out", "shape": ["M", "N"], "dtype": "float32"}],
        "outputs": [{"name": "out", "atol": 1e-2, "rtol": 1e-2}],
        "launch": {"grid": "(triton.cdiv(M, BLOCK_M),)" if kernel == "copy_rows" else
                   "(triton.cdiv(M * N, BLOCK),)", "args": args},
        "reference": f"tile_logic:{reference}",
        "shapes": {"tune": [{"M": 16, "N": 40}], "check": [{"M": 16, "N": 40}]},
        "baseline": {"BLOCK_M": 8, "BLOCK_N": 64, "num_warps": 4} if kernel == "copy_rows"
        else {"BLOCK": 64, "num_warps": 4},
    }
    path = tmp_path / f"{kernel}.json"
    path.write_text(json.dumps(doc))
    return load_task(str(path))


def test_a_task_warns_of_its_kernel_and_its_helpers(tmp_path, monkeypatch):
    spec = _task(tmp_path, "copy_rows", "copy", ["x", "out", "M", "N"])
    where = str(tmp_path / "tile_logic.py")
    assert [w.split(": `")[0] for w in spec["warnings"]] == [  # the kernel, then its helper
        f"interpreter gap: {where}:{_line('mask = (rows')}",
        f"interpreter gap: {where}:{_line('mask or (offs < 0)')}"]
    assert all(w.endswith("a GPU run (--backend cuda or --backend compile) is not affected")
               for w in spec["warnings"])
    monkeypatch.setattr(triton.knobs.runtime, "interpret", False)
    assert _task(tmp_path, "copy_rows", "copy", ["x", "out", "M", "N"])["warnings"] == []


def test_a_task_over_scalar_flags_has_no_warning(tmp_path):
    spec = _task(tmp_path, "scalar_flags", "double", ["x", "out", "M * N"])
    assert spec["warnings"] == []


def test_capture_notes_the_kernels_and_its_helpers(tmp_path):
    from tforge_worker import capture
    shutil.copy(PATH, tmp_path / "tile_logic.py")
    script = tmp_path / "run_copy.py"
    script.write_text(
        "import torch\n"
        "import tile_logic\n"
        "x = torch.randn(16, 40); out = torch.empty_like(x)\n"
        "tile_logic.copy_rows[(2,)](x, out, 16, 40, BLOCK_M=8, BLOCK_N=64)\n")
    got = capture.capture([sys.executable, str(script)], "tasks", cwd=str(tmp_path))
    (t,) = got["tasks"]
    where = f"{tmp_path / 'tile_logic.py'}"
    assert [n.split(": `")[0] for n in t["notes"] if "of tiles" in n] == [
        f"{where}:{_line('mask = (rows')}", f"{where}:{_line('mask or (offs < 0)')}"]
