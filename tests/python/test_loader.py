"""The import filter: demos at top level never run, definitions keep what they need."""

import inspect
import os

import pytest
import torch
import triton

from conftest import FIXTURES
from tforge_worker.loader import LoadError, load


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
