"""What Triton's interpreter lacks is named as such: each gap reproduced by a kernel that a GPU
compiles, run through the checker."""

import json
import os
import shutil

import pytest
import triton

from conftest import FIXTURES
from tforge_worker import load_task, run_check
from tforge_worker.gaps import interpreter_warnings

NOT_AFFECTED = "a GPU run (--backend cuda or --backend compile) is not affected"


def _task(tmp_path, kernel, dtype="float32"):
    shutil.copy(os.path.join(FIXTURES, "interpreter_gaps.py"), tmp_path / "interpreter_gaps.py")
    doc = {
        "source": "interpreter_gaps.py", "kernel": kernel,
        "inputs": [{"name": "x", "shape": ["N"], "dtype": dtype, "init": "randn"},
                   {"name": "out", "shape": ["N"], "dtype": dtype}],
        "outputs": [{"name": "out", "atol": 1e-2, "rtol": 1e-2}],
        "launch": {"grid": "(triton.cdiv(N, BLOCK),)", "args": ["x", "out", "N", "2.0"]},
        "reference": "interpreter_gaps:reference",
        "shapes": {"tune": [{"N": 1024}], "check": [{"N": 100}]},
        "baseline": {"BLOCK": 64, "num_warps": 4},
    }
    path = tmp_path / f"{kernel}.json"
    path.write_text(json.dumps(doc))
    return load_task(str(path))


@pytest.mark.parametrize("kernel, dtype, feature", [
    ("float_to", "float32", "tensor methods of a float scalar argument (.to)"),
    ("cuda_libdevice", "float32", "libdevice functions"),
    ("generic_libdevice", "float32", "libdevice functions"),
    ("inline_asm", "float32", "inline assembly (tl.inline_asm_elementwise)"),
    ("bf16_constant", "bfloat16", "bfloat16 constants"),
])
def test_each_gap_is_named(tmp_path, kernel, dtype, feature):
    result = run_check(_task(tmp_path, kernel, dtype), {"BLOCK": 64}, {"N": 100}, seed=1)
    assert result["status"] == "runtime"
    assert result["message"].startswith(f"interpreter gap: {feature}")
    assert NOT_AFFECTED in result["message"]
    assert "InterpreterError" in result["message"]  # what the interpreter said stays there


def test_the_cuda_libdevice_gap_names_the_function(tmp_path):
    result = run_check(_task(tmp_path, "cuda_libdevice"), {"BLOCK": 64}, {"N": 100}, seed=1)
    assert "triton.language.extra.cuda.libdevice.exp is not provided" in result["message"]


def test_a_real_bug_is_not_called_a_gap(tmp_path):
    result = run_check(_task(tmp_path, "real_bug"), {"BLOCK": 64}, {"N": 100}, seed=1)
    assert result["status"] == "runtime"
    assert not result["message"].startswith("interpreter gap")


def test_gaps_are_named_only_under_the_interpreter(tmp_path, monkeypatch):
    spec = _task(tmp_path, "float_to")
    from tforge_worker import worker
    try:
        raise AttributeError("'float' object has no attribute 'to'")
    except AttributeError as e:
        assert worker.classify(e)["message"].startswith("interpreter gap:")
        monkeypatch.setattr(triton.knobs.runtime, "interpret", False)
        assert worker.classify(e)["message"] == "AttributeError: 'float' object has no " \
            "attribute 'to'"
    assert interpreter_warnings(spec, spec["source"], spec["kernel"]) == []


def test_bfloat16_tensors_are_warned_about(tmp_path):
    spec = _task(tmp_path, "bf16_constant", "bfloat16")
    warnings = interpreter_warnings(spec, spec["source"], spec["kernel"])
    assert len(warnings) == 1
    assert warnings[0].startswith("interpreter gap: bfloat16 tensors (x, out)")
    assert NOT_AFFECTED in warnings[0]
    spec = _task(tmp_path, "float_to")
    assert interpreter_warnings(spec, spec["source"], spec["kernel"]) == []


def test_the_bfloat16_warning_is_true(tmp_path):
    """The interpreter's bfloat16 product is wrong: the reason for the warning."""
    import torch
    import triton.language as tl

    @triton.jit
    def mul(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * tl.load(y_ptr + offs))

    x = torch.full((16,), 1.5, dtype=torch.bfloat16)
    y = torch.full((16,), 2.0, dtype=torch.bfloat16)
    out = torch.empty_like(x)
    mul[(1,)](x, y, out, BLOCK=16)
    assert not torch.equal(out, x * y)
