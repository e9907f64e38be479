"""The import filter: demos at top level never run, definitions keep what they need."""

import inspect
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
import triton

from conftest import FIXTURES, ROOT
from tforge_worker import load_task, run_check, standin
from tforge_worker.loader import LoadError, load, recording

PACKAGE = os.path.join(FIXTURES, "pkg_relative", "relpkg")


def test_demos_are_dropped_and_reported():
    module, dropped = load(os.path.join(FIXTURES, "demo_at_import.py"))
    kinds = {d["line"]: d["kind"] for d in dropped}
    # torch.manual_seed, x = ..., print, raise, while, with, for, __main__ guard
    assert kinds == {31: "call", 32: "assign", 33: "call", 34: "raise", 35: "while",
                     37: "with", 39: "for", 41: "main-guard"}
    assert not hasattr(module, "x")
    # The loop filling `configs` is kept: the autotune decorator reads it.
    assert [c.kwargs["BLOCK"] for c in module.configs] == [32, 64]
    assert module.DTYPE is torch.float32


def test_a_filtered_kernel_runs_and_has_its_source():
    module, _ = load(os.path.join(FIXTURES, "demo_at_import.py"))
    jit = module.scale_kernel.fn
    assert "def scale_kernel" in inspect.getsource(jit.fn)
    module.scale_kernel.configs = module.configs[:1]  # one config: no benchmarking
    x = torch.arange(100, dtype=torch.float32)
    assert torch.equal(module.scale(x, 3.0), 3 * x)


def test_a_variant_text_is_what_runs():
    path = os.path.join(FIXTURES, "demo_at_import.py")
    with open(path) as f:
        text = f.read().replace("* factor, mask=mask)", "* factor + 1, mask=mask)")
    module, _ = load(path, text=text)
    assert "factor + 1" in inspect.getsource(module.scale_kernel.fn.fn)
    module.scale_kernel.configs = module.configs[:1]
    x = torch.arange(100, dtype=torch.float32)
    assert torch.equal(module.scale(x, 2.0), 2 * x + 1)


def test_kept_code_needing_dropped_code_fails_clearly():
    with pytest.raises(LoadError) as info:
        load(os.path.join(FIXTURES, "needs_dropped.py"))
    msg = str(info.value)
    assert "needs_dropped.py:9: NameError" in msg  # the def, whose default reads SIZE
    assert "dropped line(s) 4, which bind 'SIZE'" in msg


def test_errors_in_kept_code_name_the_line(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import math\nLIMIT = 1\n\ndef f():\n    return TABLE\n\nTABLE = 1 / 0\n")
    with pytest.raises(LoadError, match=r"bad.py:7: ZeroDivisionError"):
        load(str(path))


def test_syntax_errors_name_the_line(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import triton\n\ndef f(:\n    pass\n")
    with pytest.raises(LoadError, match=r"broken.py:3: syntax error"):
        load(str(path))


def test_definition_only_blocks_are_kept(tmp_path):
    path = tmp_path / "blocks.py"
    path.write_text(
        "try:\n    import no_such_module_here\nexcept ImportError:\n    no_such_module_here = None\n"
        "if True:\n    def helper():\n        return 1\n"
        "if True:\n    print('demo')\n")
    module, dropped = load(str(path))
    assert module.no_such_module_here is None and module.helper() == 1
    assert [d["line"] for d in dropped] == [8]


def test_loaded_modules_are_distinct():
    a, _ = load(os.path.join(FIXTURES, "demo_at_import.py"))
    b, _ = load(os.path.join(FIXTURES, "demo_at_import.py"))
    assert a is not b and a.__name__ != b.__name__
    assert isinstance(a.scale_kernel, triton.runtime.Autotuner)


@pytest.mark.parametrize("tail, expected", [
    ("def _stop():\n    raise SystemExit(3)\n\n\nLIMIT = _stop()\n\n\ndef use():\n    return LIMIT\n",
     "SystemExit: 3"),
    ("def _stop():\n    raise KeyboardInterrupt\n\n\nLIMIT = _stop()\n\n\ndef use():\n"
     "    return LIMIT\n", "KeyboardInterrupt"),
])
def test_what_a_file_raises_at_import_is_named(tmp_path, tail, expected):
    path = tmp_path / "stops.py"
    path.write_text("import triton\n\n\n" + tail)
    with pytest.raises(LoadError, match=f"{path}:8: {expected}"):
        load(str(path))


@pytest.mark.parametrize("data, expected", [
    (b"x = 1\0\n", "not Python source"),
    (b"# caf\xe9\nx = 1\n", r"not UTF-8 text \(byte 0xe9 at offset 5\)"),
])
def test_files_that_are_not_python_text_are_named(tmp_path, data, expected):
    path = tmp_path / "odd.py"
    path.write_bytes(data)
    with pytest.raises(LoadError, match=f"{path}: {expected}"):
        load(str(path))


def test_dropped_statements_name_their_file():
    path = os.path.join(FIXTURES, "demo_at_import.py")
    _, dropped = load(path)
    assert {d["file"] for d in dropped} == {path}
    with open(path) as f:
        _, dropped = load(path, text=f.read())
    assert {d["file"] for d in dropped} == {path}  # a variant is reported as the file it varies


def test_recording_collects_every_load_in_order():
    kernel = os.path.join(FIXTURES, "demo_at_import.py")
    ref = os.path.join(PACKAGE, "ops", "ref.py")
    with recording() as dropped:
        load(kernel)
        load(ref)
    load(kernel)  # outside: not recorded
    assert [d["file"] for d in dropped] == [kernel] * 8 + [ref]
    assert dropped[-1]["line"] == 8 and dropped[-1]["kind"] == "call"


def test_a_file_in_a_package_imports_its_siblings_relatively():
    path = os.path.join(PACKAGE, "ops", "scale.py")
    saved_path = list(sys.path)
    module, dropped = load(path)
    assert sys.path == saved_path
    assert module.__package__ == "relpkg.ops" and module.__spec__.parent == "relpkg.ops"
    assert module.SCALE == 2.0 and module.calculate_settings(3) == (4, 4)
    assert [(d["file"], d["line"]) for d in dropped] == [(path, 25)]  # the demo print
    assert "def scale_rows" in inspect.getsource(module.scale_rows.fn)
    x = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    assert torch.equal(module.scale(x), 2 * x)


def test_a_packaged_task_with_a_packaged_reference_checks(tmp_path):
    """The reference beside the task is in the package too, and imports relatively as well."""
    tree = tmp_path / "relpkg_task"  # another package name: relpkg itself is already imported
    shutil.copytree(PACKAGE, tree)
    task = {
        "source": "scale.py", "kernel": "scale_rows",
        "inputs": [{"name": "x", "shape": ["M", "N"], "dtype": "float32", "init": "randn"},
                   {"name": "out", "shape": ["M", "N"], "dtype": "float32"}],
        "outputs": [{"name": "out", "atol": 1e-6, "rtol": 1e-6}],
        "launch": {"grid": "(M,)", "args": ["x", "out", "N", "2.0"]},
        "reference": "ref:reference",
        "shapes": {"tune": [{"M": 8, "N": 3}], "check": [{"M": 4, "N": 3}]},
        "baseline": {"BLOCK": 4, "num_warps": 1},
    }
    (tree / "ops" / "task.json").write_text(json.dumps(task))
    spec = load_task(str(tree / "ops" / "task.json"))
    assert run_check(spec, {"BLOCK": 4}, {"M": 4, "N": 3}, seed=1)["status"] == "ok"


def test_a_file_querying_the_gpu_at_import_loads_and_runs_without_one():
    module, dropped = load(os.path.join(FIXTURES, "device_query_at_import.py"))
    assert [d["line"] for d in dropped] == [42, 43]  # the demo, not the queries
    assert module.DEVICE == torch.device("cpu")
    assert module.capability_string() == "cuda:90 (9.0, 132 SMs, 65536 registers, 232448 " \
        "bytes, warp 32, device 0, cpu)"
    x = torch.randn(100 * 64 * 3)
    out, programs = module.scale(x, 3.0)
    assert programs == 132 and torch.equal(out, 3 * x)  # a persistent grid of one wave


def test_the_stand_in_device_is_put_back_after_the_import():
    load(os.path.join(FIXTURES, "device_query_at_import.py"))
    assert triton.runtime.driver._active is None
    with pytest.raises(Exception):
        torch.cuda.get_device_capability()
    with pytest.raises(RuntimeError, match="0 active drivers"):
        triton.runtime.driver.active.get_current_target()


def test_the_stand_in_answers_as_an_h200_and_nests():
    with standin.active():
        with standin.active():
            props = torch.cuda.get_device_properties(0)
        assert (props.name, props.major, props.minor) == ("NVIDIA H200", 9, 0)
        assert props.shared_memory_per_block_optin == 232448
        utils = triton.runtime.driver.active.utils
        assert utils.get_device_properties(0)["multiprocessor_count"] == 132
        assert not torch.cuda.is_available()  # guarded code takes its CPU branch
    assert triton.runtime.driver._active is None


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU path (target cuda:90)")
def test_a_file_querying_the_gpu_at_import_compiles_without_one(tmp_path):
    """The compile backend imports the file outside the interpreter: the stand-in serves it too."""
    shutil.copy(os.path.join(FIXTURES, "device_query_at_import.py"), tmp_path)
    task = {"source": "device_query_at_import.py", "kernel": "persistent_scale",
            "inputs": [{"name": "x", "shape": ["N"], "dtype": "float32", "init": "randn"}],
            "outputs": [{"name": "out", "atol": 0, "rtol": 0}],
            "launch": {"call": "device_query_at_import:scale", "args": ["x", "2.0"],
                       "returns": ["out", None]},
            "reference": "baseline", "shapes": {"tune": [{"N": 100000}], "check": [{"N": 100}]}}
    (tmp_path / "task.json").write_text(json.dumps(task))
    script = "import json, sys, tforge_worker as w\nt = w.load_task(sys.argv[1])\n" \
        "print(json.dumps(w.compile(t, t['baseline'][0], t['shapes']['tune'][0])))"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.path.join(ROOT, "engine", "worker", "python")
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "task.json")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["status"] == "ok" and result["target"] == "cuda:90", result
