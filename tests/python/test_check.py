"""The checker: poisoned outputs, fresh inputs, per-output tolerances, NaN never passes, copies
for kernels that write their inputs, failures as statuses."""

import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import EXAMPLES, ROOT
from tforge_worker import compile, load_task, make_inputs, run_check, time
from tforge_worker.worker import compare

CHECK = {"N": 1000}
BASE = {"BLOCK": 128, "num_warps": 4}


def _load(write_task, task, **changes):
    task.update(changes)
    return load_task(write_task(task))


def test_correct_kernel_passes(add_task, write_task):
    result = run_check(_load(write_task, add_task), BASE, CHECK, seed=1)
    assert result["status"] == "ok"
    assert result["max_abs_err"] == {"out": 0.0} and result["bad"] == {"out": 0}


def test_planted_off_by_one_is_wrong(add_task, write_task):
    result = run_check(_load(write_task, add_task, kernel="add_off_by_one"), BASE, CHECK, seed=1)
    assert result["status"] == "wrong"
    assert result["bad"] == {"out": 1}  # the one element left poisoned
    assert "out: 1 of 1000 elements" in result["message"]


def test_a_config_that_misses_work_is_wrong(add_task, write_task):
    """The grid assumes 128-wide blocks: BLOCK=64 covers half of the vector."""
    spec = _load(write_task, add_task,
                 launch={"grid": "(triton.cdiv(N, 128),)", "args": ["x", "y", "out", "N"]})
    assert run_check(spec, {"BLOCK": 128}, CHECK, seed=1)["status"] == "ok"
    result = run_check(spec, {"BLOCK": 64}, CHECK, seed=1)
    assert result["status"] == "wrong" and result["bad"]["out"] == 1000 - 8 * 64


def test_outputs_are_poisoned_before_the_run(add_task, write_task):
    """A kernel that writes nothing leaves NaN behind, even where the output starts at zero."""
    add_task["inputs"][2]["init"] = "zeros"
    add_task["reference"] = "planted:reference"
    spec = _load(write_task, add_task, kernel="add_nothing")
    result = run_check(spec, BASE, {"N": 16}, seed=1)
    assert result["status"] == "wrong" and result["bad"] == {"out": 16}
    assert result["max_abs_err"] == {"out": None}  # no finite error to report


def test_integer_outputs_are_poisoned_too(add_task, write_task):
    del add_task["inputs"]
    spec = _load(write_task, add_task, kernel="add_nothing", inputs_fn="planted:ints")
    assert run_check(spec, BASE, {"N": 16}, seed=1)["status"] == "wrong"
    spec = _load(write_task, add_task, kernel="add_ok", inputs_fn="planted:ints")
    assert run_check(spec, BASE, {"N": 16}, seed=1)["status"] == "ok"


def test_nan_never_passes(add_task, write_task):
    spec = _load(write_task, add_task, kernel="add_nan", reference="planted:reference_nan")
    result = run_check(spec, BASE, CHECK, seed=1)
    assert result["status"] == "wrong" and result["bad"] == {"out": 1}


def test_compare_rules():
    e = torch.tensor([1.0, 100.0, float("inf"), 0.0])
    assert compare(e.clone(), e, 0, 0)["bad"] == 0  # equal infinities pass
    a = torch.tensor([1.1, 101.0, float("inf"), 0.0])
    assert compare(a, e, 0.0, 0.01)["bad"] == 1  # 0.1 > 0.01 * 1; 1 <= 0.01 * 100
    assert compare(a, e, 0.1, 0.01)["bad"] == 0
    a[3] = float("nan")
    c = compare(a, e, 1e9, 1e9)
    assert c["bad"] == 1 and c["nonfinite"] == 2
    assert compare(torch.zeros(2, 2), torch.zeros(4), 1, 1)["bad"] == 4  # shape mismatch
    big = torch.tensor([1 << 40], dtype=torch.int64)
    assert compare(big + 1, big, 0, 0)["bad"] == 1  # equal in float32, not in int64


def test_tolerances_are_applied(add_task, write_task):
    """An fp16 output against an fp32 reference: rounding errors pass loose tolerances only."""
    add_task["inputs"][2]["dtype"] = "float16"
    loose = run_check(_load(write_task, add_task), BASE, CHECK, seed=1)
    assert loose["status"] == "ok" and 0 < loose["max_abs_err"]["out"] < 1e-2
    add_task["outputs"][0].update(atol=1e-5, rtol=1e-5)
    tight = run_check(_load(write_task, add_task), BASE, CHECK, seed=1)
    assert tight["status"] == "wrong" and tight["max_abs_err"] == loose["max_abs_err"]


def test_kernels_that_write_inputs_get_copies(add_task, write_task):
    """The reference clobbers its input: with copies the kernel still sees the real values."""
    task = dict(add_task, kernel="double_in_place", reference="planted:reference_sloppy_double",
                inputs=[{"name": "x", "shape": ["N"], "dtype": "float32", "init": "randn"}],
                outputs=[{"name": "x", "atol": 0, "rtol": 0, "poison": False}],
                launch={"grid": "(triton.cdiv(N, BLOCK),)", "args": ["x", "N"]})
    spec = load_task(write_task(task))
    assert spec["writes_inputs"] is True
    assert run_check(spec, BASE, CHECK, seed=1)["status"] == "ok"
    # Without copies the kernel doubles the zeros the reference left: the check must see it.
    spec = load_task(write_task(dict(task, writes_inputs=False)))
    assert run_check(spec, BASE, CHECK, seed=1)["status"] == "wrong"


def test_inputs_are_fresh_per_seed_and_reproducible(add_task, write_task):
    spec = _load(write_task, add_task)
    a, b, c = (make_inputs(spec, CHECK, s) for s in (1, 1, 2))
    assert torch.equal(a["x"], b["x"]) and not torch.equal(a["x"], c["x"])
    assert not torch.equal(a["x"], a["y"])  # one stream per tensor
    assert float(a["y"].min()) >= 0 and float(a["y"].max()) < 2  # rand * scale 2


def test_a_failing_kernel_is_a_status(add_task, write_task):
    spec = _load(write_task, add_task, kernel="add_raises")
    assert run_check(spec, {"BLOCK": 32}, CHECK, seed=1)["status"] == "ok"
    result = run_check(spec, {"BLOCK": 128}, CHECK, seed=1)
    # Under the interpreter a static_assert fails at run time; compiled, it is a compile error.
    assert result["status"] in ("compile", "runtime")
    assert "BLOCK must stay below 64" in result["message"] and result["fatal"] is False


def test_wrapper_launch(add_task, write_task):
    spec = _load(write_task, add_task, launch={"wrapper": "planted:wrapper"})
    assert spec["baseline"] == [{"BLOCK": 128, "num_warps": 4, "num_stages": 1}]
    assert run_check(spec, {}, CHECK, seed=3)["status"] == "ok"
    assert run_check(spec, {"BLOCK": 256}, CHECK, seed=3)["status"] == "ok"


def test_a_failing_reference_is_a_task_error(add_task, write_task):
    from tforge_worker import TaskError
    spec = _load(write_task, add_task, reference="planted:wrapper")  # wrong signature
    with pytest.raises(TaskError, match="reference: planted:wrapper failed"):
        run_check(spec, BASE, CHECK, seed=1)


def test_an_inputs_fn_that_raises_is_a_task_error(add_task, write_task):
    from tforge_worker import TaskError
    del add_task["inputs"]
    spec = _load(write_task, add_task, inputs_fn="planted:reference")  # wrong signature
    with pytest.raises(TaskError, match="inputs_fn: planted:reference failed at shape"):
        run_check(spec, BASE, CHECK, seed=1)


def test_a_failing_launch_expression_is_a_task_error(add_task, write_task):
    from tforge_worker import TaskError
    spec = _load(write_task, add_task,
                 launch={"grid": "(N // 0,)", "args": ["x", "y", "out", "N"]})
    with pytest.raises(TaskError, match=r"launch.grid: '\(N // 0,\)' failed: ZeroDivisionError"):
        run_check(spec, BASE, CHECK, seed=1)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the answer without a GPU")
def test_time_without_cuda_is_unsupported(add_task, write_task):
    result = time(_load(write_task, add_task), BASE, CHECK)
    assert result["status"] == "unsupported" and "median_ms" not in result


def test_compile_under_the_interpreter_is_unsupported(add_task, write_task):
    assert compile(_load(write_task, add_task), BASE, CHECK)["status"] == "unsupported"


COMPILE_SCRIPT = """
import glob, json, os, sys
import tforge_worker as w
add = w.load_task(sys.argv[1] + "/vector_add/task.json")
mm = w.load_task(sys.argv[1] + "/matmul/task.json")
big = dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=128, GROUP_M=8, num_warps=8, num_stages=5)
mid = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=2)
cubins = lambda: len(glob.glob(os.environ["TRITON_CACHE_DIR"] + "/*/*.cubin"))
before = cubins()
also = w.compile(mm, mid, mm["shapes"]["tune"][0], also=mm["shapes"]["check"])
also["new_cubins"] = cubins() - before
print(json.dumps([w.compile(add, add["baseline"][0], add["shapes"]["tune"][0]),
                  w.compile(mm, mm["baseline"][0], mm["shapes"]["tune"][0]),
                  w.compile(mm, big, mm["shapes"]["tune"][0]), also]))
"""


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU path (target cuda:90)")
def test_compile_for_sm90_without_a_gpu(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.path.join(ROOT, "engine", "worker", "python")
    env["TRITON_CACHE_DIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, EXAMPLES], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    add, mm, big, also = json.loads(out.stdout.splitlines()[-1])
    assert add["status"] == "ok" and add["target"] == "cuda:90" and add["registers"] > 0
    assert add["spill_stores"] == 0 and add["num_warps"] == 4
    assert mm["status"] == "ok" and mm["shared_bytes"] > 0
    assert big["status"] == "compile" and "shared memory" in big["message"]
    # The check shape (48x40x72) specialises differently from 4096^3: a second binary, cached.
    assert also["status"] == "ok" and also["new_cubins"] == 2, also


def test_what_the_native_compiler_prints_becomes_the_reason(capfd):
    """A failing MLIR pass prints the whole module on file descriptor 2: the compile worker
    keeps it off the terminal and gives its reasons in the failure's message."""
    from tforge_worker import build
    printed = (b"kernel.py:212: void CTAPlanner::markTiled(): Assertion `!tiled && \"CTA tiling "
               b"is already determined\"' failed.\nmodule attributes {ttg.maxnreg = 255 : i32} {\n"
               b"}\nkernel.py<variant-a4d9>:19:0: error: Failures have been detected while "
               b"processing an MLIR pass pipeline\nkernel.py<variant-a4d9>:19:0: note: Pipeline "
               b"failed while executing [`TritonGPUPlanCTAPass` on 'builtin.module' operation]\n")
    text = []
    with build._native_stderr(text):
        os.write(2, printed)
    assert text == [printed.decode()] and capfd.readouterr().err == ""
    assert build._diagnostics(text[0]) == ("Assertion `!tiled && \"CTA tiling is already "
                                           "determined\"' failed; in TritonGPUPlanCTAPass")
    assert build._diagnostics("warning: nothing wrong\n") == ""


def test_a_compile_errors_reason_comes_first():
    # Triton puts the reason after the source lines, past what a measurement keeps; a helper's
    # error comes wrapped in the kernel's
    import ast
    from triton.compiler.errors import CompilationError
    from tforge_worker.worker import classify
    helper = "def helper(y):\n    return y * G\n"
    inner = CompilationError(helper, ast.parse(helper).body[0].body[0], "NameError: G is global")
    outer = CompilationError("def k(x):\n    y = helper(x)\n", ast.parse("helper(x)").body[0])
    outer.__cause__ = inner
    got = classify(outer)
    assert got["status"] == "compile"
    assert got["message"].startswith("CompilationError at line 2 of helper (return y * G): "
                                     "NameError: G is global\n")
