"""Variants of a task's kernel file (what the transforms compose): run in place of the kernel for
checks, whatever the launch form; a wrong or broken variant fails as a candidate; a reference
that is the baseline's own launch is never the variant's."""

import os

from conftest import FIXTURES
from tforge_worker import load_task, run_check
from tforge_worker.variants import unified_diff

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADD = os.path.join(ROOT, "experiments", "kernels", "vector_add")
REAL = os.path.join(FIXTURES, "real_shapes")


def _source(path):
    with open(path) as f:
        return f.read()


def test_a_variant_runs_in_place_of_the_kernel_launched_by_the_task_grid():
    task = load_task(os.path.join(ADD, "task.json"))
    shape = task["shapes"]["check"][0]
    config = task["baseline"][0]
    text = _source(os.path.join(ADD, "kernel.py"))
    same = text.replace("tl.store(out_ptr + offs, x + y, mask=mask)",
                        "tl.store(out_ptr + offs, y + x, mask=mask)")
    wrong = text.replace("tl.store(out_ptr + offs, x + y, mask=mask)",
                         "tl.store(out_ptr + offs, x + y + 1.0, mask=mask)")
    assert same != text and wrong != text
    assert run_check(task, config, shape, variant=same)["status"] == "ok"
    bad = run_check(task, config, shape, variant=wrong)
    assert bad["status"] == "wrong", bad
    assert run_check(task, config, shape)["status"] == "ok"  # the file itself, afterwards


def test_a_variant_reaches_the_kernel_through_the_files_own_function():
    task = load_task(os.path.join(REAL, "scale_rows_task.json"))
    text = _source(os.path.join(REAL, "rows.py"))
    wrong = text.replace("tl.store(y_ptr + row * stride + cols, y, mask=mask)",
                         "tl.store(y_ptr + row * stride + cols, y * 2.0, mask=mask)")
    assert wrong != text
    shape = {"R": 3, "C": 100}
    config = {"BLOCK_SIZE": 128, "num_warps": 2}
    # the reference is the baseline's own launch: the file's kernel, so the variant is caught
    bad = run_check(task, config, shape, variant=wrong)
    assert bad["status"] == "wrong", bad
    assert run_check(task, config, shape, variant=text + "\n")["status"] == "ok"


def test_a_variant_that_does_not_load_is_a_failed_compile_naming_the_line():
    task = load_task(os.path.join(ADD, "task.json"))
    broken = _source(os.path.join(ADD, "kernel.py")).replace("def add_kernel(",
                                                             "def add_kernel((")
    r = run_check(task, task["baseline"][0], task["shapes"]["check"][0], variant=broken)
    assert r["status"] == "compile" and "syntax error" in r["message"], r


def test_the_diff_is_unified_and_empty_for_the_file_itself():
    path = os.path.join(ADD, "kernel.py")
    text = _source(path)
    assert unified_diff(path, text) == ""
    d = unified_diff(path, text.replace("x + y, mask", "y + x, mask"))
    assert d.startswith("--- a/kernel.py\n+++ b/kernel.py\n@@")
    assert "-    tl.store(out_ptr + offs, x + y, mask=mask)" in d
