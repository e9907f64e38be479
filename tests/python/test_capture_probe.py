"""Capture on files written the way third-party projects write them, where it used to fail: a
kernel under a library's KernelInterface wrapper, an autotune config carrying a constexpr the
space keeps fixed, infinite float arguments, a kernel writing only a scratch buffer of its
function, a function returning more when a weight takes gradients, and `-m package.module`."""

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import FIXTURES, ROOT
from tforge_worker import capture, worker
from tforge_worker.task import TaskError

REALISTIC = os.path.join(FIXTURES, "realistic")


def _by_kernel(got):
    assert got["error"] is None, got["error"]
    out = {}
    for t in got["tasks"]:
        out.setdefault(t["kernel"], []).append(t)
    return out


def _script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.fixture(scope="module")
def flaggems(tmp_path_factory):
    out = tmp_path_factory.mktemp("flaggems")
    return _by_kernel(capture.init(os.path.join(REALISTIC, "flaggems_ops.py"), str(out)))


# ---- a kernel under a library's triton.KernelInterface wrapper (FlagGems' @libentry()) ----------

def test_a_kernel_under_a_kernel_interface_wrapper_is_found_and_checked(flaggems):
    assert set(flaggems) == {"softmax_kernel_inner", "mv_kernel"}
    for kernel, (t,) in flaggems.items():
        assert t["check"] == "ok", (kernel, t.get("check_message"))
        spec = worker.load_task(t["task"])
        # the autotuner under the wrapper is the kernel's: its configs are the default baseline
        assert spec["kernel_kind"] == "autotune"
        assert [p["name"] for p in spec["kernel_params"]][:2] in (["output_ptr", "input_ptr"],
                                                                 ["A", "B"])


def test_the_wrappers_of_a_kernel_are_peeled_to_its_jit_function(flaggems):
    spec = worker.load_task(flaggems["mv_kernel"][0]["task"])
    loaded = worker.get(spec)
    chain = worker.layers(loaded.kernel)
    assert [type(k).__name__ for k in chain[:2]] == ["LibEntry", "Autotuner"]
    assert worker.unwrap(loaded.kernel) is chain[-1] and chain[-1].__name__ == "mv_kernel"
    assert worker.autotuner(loaded.kernel) is chain[1]


def test_a_candidate_of_a_wrapped_kernel_runs_with_its_own_block(flaggems):
    (t,) = flaggems["mv_kernel"]
    spec = worker.load_task(t["task"])
    shape = spec["shapes"]["check"][0]
    for block in (16, 64):  # smaller and larger than the recorded one
        got = worker.run_check(spec, {"BLOCK_N": block, "BLOCK_M": 32, "num_warps": 4,
                                      "num_stages": 2}, shape, seed=2)
        assert got["status"] == "ok", got["message"]


def test_a_wrappers_launch_cache_does_not_replay_another_config(tmp_path):
    """Launched once, the task keeps the function's grid lambda; the wrapper's cache, filled by
    the reference's launch, would hand the next candidate the reference's block and grid."""
    with open(os.path.join(REALISTIC, "flaggems_ops.py")) as f:
        text = f.read()
    main = text.index('if __name__ == "__main__":')
    path = tmp_path / "mv_once.py"
    path.write_text(text[:main] + textwrap.dedent("""
        if __name__ == "__main__":
            a, v = torch.randn(70, 50), torch.randn(50)
            torch.testing.assert_close(mv(a, v), a @ v, atol=1e-4, rtol=1e-4)
    """))
    got = _by_kernel(capture.init(str(path), str(tmp_path / "out")))
    (t,) = got["mv_kernel"]
    assert t["check"] == "ok", t.get("check_message")
    spec = worker.load_task(t["task"])
    assert "grid" not in spec["launch"] or spec["launch"]["grid"] is None
    for block in (16, 64):  # each after the reference's launch with the recorded 32
        got = worker.run_check(spec, {"BLOCK_N": block, "BLOCK_M": 32, "num_warps": 4,
                                      "num_stages": 2}, spec["shapes"]["check"][0], seed=2)
        assert got["status"] == "ok", (block, got["message"])


def test_a_wrapped_kernel_launched_directly_runs_each_candidates_config(tmp_path):
    with open(os.path.join(REALISTIC, "flaggems_ops.py")) as f:
        text = f.read()
    main = text.index('if __name__ == "__main__":')
    path = tmp_path / "mv_direct.py"
    path.write_text(text[:main] + textwrap.dedent("""
        def mv_into(inp, vec, buffers):  # buffers: a dict, so the kernel is launched directly
            N, M = inp.shape
            out = buffers["out"]
            mv_kernel[lambda META: (triton.cdiv(N, META["BLOCK_N"]),)](
                inp, vec, out, N, M, inp.stride(0), inp.stride(1), vec.stride(0), out.stride(0))


        if __name__ == "__main__":
            a, v = torch.randn(70, 50), torch.randn(50)
            buffers = {"out": torch.empty(70)}
            mv_into(a, v, buffers)
            torch.testing.assert_close(buffers["out"], a @ v, atol=1e-4, rtol=1e-4)
    """))
    got = _by_kernel(capture.init(str(path), str(tmp_path / "out")))
    (t,) = got["mv_kernel"]
    assert t["launch"] == "grid" and t["check"] == "ok", t.get("check_message")
    spec = worker.load_task(t["task"])
    blocks = []

    def seeing(cls, original):
        def run(fn, *args, grid, warmup, **kwargs):
            blocks.append(kwargs["BLOCK_N"])
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
        return run
    with worker.hooked_runs(seeing):
        got = worker.run_check(spec, {"BLOCK_N": 16, "BLOCK_M": 32, "num_warps": 4,
                                      "num_stages": 2}, spec["shapes"]["check"][0], seed=2)
    assert got["status"] == "ok", got["message"]
    assert blocks == [32, 16]  # the reference's (the baseline), then the candidate's


# ---- an autotune config carrying a constexpr the analysis keeps fixed -------------------------

def test_a_fixed_constexpr_of_the_config_is_in_the_baseline_and_kept_by_candidates(flaggems):
    (t,) = flaggems["softmax_kernel_inner"]
    assert t["baseline"]["ONE_TILE_PER_CTA"] is False and t["baseline"]["TILE_N"] == 32
    assert "ONE_TILE_PER_CTA" not in t["space"]["params"]
    assert "TILE_N" in t["space"]["params"]
    spec = worker.load_task(t["task"])
    # a point of the space names only what it tunes: the flag comes from the baseline
    got = worker.run_check(spec, {"TILE_N": 64, "num_warps": 2, "num_stages": 2},
                           spec["shapes"]["check"][0], seed=2)
    assert got["status"] == "ok", got["message"]


FIXED_FLAG = """
    import torch
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 64, "EVEN_N": False}, num_warps=2)],
                     key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if EVEN_N:
            tl.store(out_ptr + offs, tl.load(x_ptr + offs) * alpha)
        else:
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


    def scale(x, alpha=2.0):
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, alpha)
        return out


    def scale_by(x, options):  # options: a dict, so the kernel is launched directly
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, options["alpha"])
        return out


    if __name__ == "__main__":
        x = torch.randn(300)
        torch.testing.assert_close(scale(x), 2 * x)
        torch.testing.assert_close(scale_by(x[:200], {"alpha": 3.0}), 3 * x[:200])
"""


def test_a_config_flag_reaches_every_config_launched_by_call_or_by_grid(tmp_path):
    got = _by_kernel(capture.init(_script(tmp_path, "scale.py", FIXED_FLAG),
                                  str(tmp_path / "out")))
    tasks = got["scale_kernel"]
    assert sorted(t["launch"] for t in tasks) == ["call scale:scale", "grid"]
    for t in tasks:
        assert t["check"] == "ok", t.get("check_message")
        assert t["baseline"]["EVEN_N"] is False and "EVEN_N" not in t["space"]["params"]
        spec = worker.load_task(t["task"])
        got = worker.run_check(spec, {"BLOCK": 128, "num_warps": 4, "num_stages": 3},
                               spec["shapes"]["check"][0], seed=2)
        assert got["status"] == "ok", (t["launch"], got["message"])


# ---- infinite floats --------------------------------------------------------------------------

@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 0.5])
def test_a_float_literal_reads_back_as_the_same_float(value):
    text = capture._literal({"value": value})
    back = eval(text, {})
    assert back == value or (math.isnan(value) and math.isnan(back))


def test_an_infinite_float_argument_of_the_launcher(tmp_path):
    """ssd_chunk_cumsum's launcher takes dt_limit=(0.0, inf)."""
    got = _by_kernel(capture.init(os.path.join(REALISTIC, "ssd_chunk_cumsum.py"),
                                  str(tmp_path)))
    (t,) = got["_chunk_cumsum_fwd_kernel"]
    assert t["check"] == "ok", t.get("check_message")
    doc = json.load(open(t["task"]))
    assert doc["launch"]["kwargs"]["dt_limit"] == '(0.0, float("inf"))'



CLAMP = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def clamp_kernel(x_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, lo), hi), mask=mask)


    def clamp(x, lo=float("-inf"), hi=float("inf")):
        out = torch.empty_like(x)
        clamp_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), lo, hi, BLOCK=128)
        return out


    if __name__ == "__main__":
        x = torch.randn(500)
        torch.testing.assert_close(clamp(x, lo=0.0), x.clamp(min=0.0))
"""


def test_an_infinite_float_argument_of_a_function(tmp_path):
    got = _by_kernel(capture.init(_script(tmp_path, "clamp.py", CLAMP), str(tmp_path / "out")))
    (t,) = got["clamp_kernel"]
    assert t["launch"] == "call clamp:clamp"
    assert t["check"] == "ok", t.get("check_message")
    kwargs = json.load(open(t["task"]))["launch"]["kwargs"]
    assert kwargs["lo"] == "0.0" and kwargs["hi"] == 'float("inf")'


# ---- a kernel writing only a scratch buffer its function allocates ----------------------------

def test_a_kernel_writing_only_a_scratch_buffer_is_launched_directly(tmp_path):
    got = _by_kernel(capture.init(os.path.join(REALISTIC, "moe_align_stages.py"),
                                  str(tmp_path)))
    for kernel in ("moe_align_block_size_stage1", "moe_align_block_size_stage2"):
        (t,) = got[kernel]
        assert t["launch"] == "grid", t["launch"]
        assert any("launched directly" in n and "tokens_cnts_ptr" in n for n in t["notes"])
        assert t["check"] == "ok", (kernel, t.get("check_message"))
        doc = json.load(open(t["task"]))
        # the counts are read before they are written: their zeros are an input, not poisoned
        assert doc["outputs"] == [{"name": "tokens_cnts_ptr", "atol": 0, "rtol": 0,
                                   "poison": False}]
    # a stage that writes a tensor of its function's arguments stays a call
    (t,) = got["moe_align_block_size_stage3"]
    assert t["launch"] == "call moe_align_stages:moe_align_block_size_triton"


# ---- a return value that depends on requires_grad, and `python -m package.module` -------------

def _capture_module(out, module, on_path):
    """`capture -- python -m MODULE` from the package's parent folder, in a process of its own
    whose path holds that folder only `on_path` (the engine's worker's does not)."""
    driver = out / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {os.path.join(ROOT, "engine", "worker", "python")!r})
        if {on_path!r}:
            sys.path.insert(0, {REALISTIC!r})
        from tforge_worker import capture
        got = capture.capture(["python", "-m", {module!r}], {str(out / "tasks")!r},
                              cwd={REALISTIC!r})
        print(json.dumps(got))
    """))
    env = dict(os.environ, TRITON_INTERPRET="1")
    env.pop("PYTHONPATH", None)
    run = subprocess.run([sys.executable, str(driver)], cwd=str(out), env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_module_run_with_dash_m_finds_its_package_in_the_working_folder(tmp_path):
    got = _capture_module(tmp_path, "pkg.ops", on_path=False)
    assert got["error"] is None, got["error"]
    assert got["kernels"] == ["_layer_norm_fwd"]
    assert [t["check"] for t in got["tasks"]] == ["ok"]


@pytest.fixture(scope="module")
def liger_module(tmp_path_factory):
    return _capture_module(tmp_path_factory.mktemp("flce"), "pkg.fused_linear_xent",
                           on_path=True)


def test_inputs_that_take_gradients_are_made_so(liger_module):
    (t,) = [t for t in liger_module["tasks"] if t["kernel"] == "cross_entropy_kernel"]
    assert t["check"] == "ok", t.get("check_message")
    doc = json.load(open(t["task"]))
    assert doc["launch"]["returns"] == ["out0", "out1", "out2"]  # grad_weight comes back
    grads = {i["name"]: i.get("requires_grad", False) for i in doc["inputs"]}
    assert grads == {"_input": True, "weight": True, "target": False}
    spec = worker.load_task(t["task"])
    made = worker.make_inputs(spec, spec["shapes"]["check"][0], seed=0)
    assert made["weight"].requires_grad and not made["target"].requires_grad


def test_requires_grad_is_a_truth_value_on_a_float_tensor(write_task, add_task):
    add_task["inputs"][0]["requires_grad"] = True
    spec = worker.load_task(write_task(add_task))
    assert spec["inputs"][0]["requires_grad"] is True
    add_task["inputs"][0]["requires_grad"] = "yes"
    with pytest.raises(TaskError, match=r"inputs\[0\]\.requires_grad: expected true or false"):
        worker.load_task(write_task(add_task))
    add_task["inputs"][0].update(requires_grad=True, dtype="int32", init="randint:0:5")
    with pytest.raises(TaskError, match=r"inputs\[0\]\.requires_grad: expected false for dtype "
                                        r"int32"):
        worker.load_task(write_task(add_task))


def test_an_input_that_takes_gradients_is_checked_like_any_other(write_task, add_task):
    add_task["inputs"][0]["requires_grad"] = True
    spec = worker.load_task(write_task(add_task))
    got = worker.run_check(spec, spec["baseline"][0], spec["shapes"]["check"][0])
    assert got["status"] == "ok", got["message"]
