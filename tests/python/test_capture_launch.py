"""Launch capture of the ways real files launch their kernels: constexprs passed positionally or
placed between pointers, decorated wrappers, launchers that are not plain functions (an autograd
Function, an nn.Module, a config object), wrappers that assert on their inputs."""

import json
import os

import pytest
import torch

from conftest import FIXTURES
from tforge_worker import capture, worker

REALISTIC = os.path.join(FIXTURES, "realistic")


def _tasks(name, tmp_path):
    """kernel -> its tasks' reports by launch form ("grid", "call module:function")."""
    got = capture.init(os.path.join(REALISTIC, name), str(tmp_path))
    assert got["error"] is None, got["error"]
    tasks = {}
    for t in got["tasks"]:
        tasks.setdefault(t["kernel"], {})[t["launch"]] = t
    return tasks


def test_positional_constexprs_under_decorated_wrappers_are_called_through_them(tmp_path):
    tasks = _tasks("fused_add_rmsnorm.py", tmp_path)
    for kernel, call, tuned in (
            ("_fused_add_rmsnorm_kernel", "fused_add_rmsnorm:fused_add_rmsnorm", "BLOCK_SIZE"),
            ("_scaled_silu_kernel", "fused_add_rmsnorm:scaled_silu", "BLOCK"),
            ("_silu_mul_kernel", "fused_add_rmsnorm:silu_mul", "BLOCK")):  # heuristics
        # @torch.no_grad() / @torch.compiler.disable: still the user's function
        assert list(tasks[kernel]) == [f"call {call}"], tasks[kernel]
        t = tasks[kernel][f"call {call}"]
        assert t["check"] == "ok", t.get("check_message")
        assert tuned in t["space"]["params"]


def test_a_positional_block_size_takes_each_candidate_in_its_slot(tmp_path):
    (t,) = _tasks("fused_add_rmsnorm.py", tmp_path)["_fused_add_rmsnorm_kernel"].values()
    spec = worker.load_task(t["task"])
    shape = spec["shapes"]["check"][0]
    loaded = worker.get(spec)
    seen = []

    def spy(cls, original):
        def run(fn, *args, grid, warmup, **kwargs):
            seen.append((args, kwargs))
            return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
        return run
    inputs = worker.make_inputs(loaded, shape, seed=1)
    with worker.hooked_runs(spy):
        worker.launch(loaded, inputs, {"BLOCK_SIZE": 512, "num_warps": 2}, shape)
    (args, kwargs), = seen
    assert args[-1] == 512 and "BLOCK_SIZE" not in kwargs and kwargs["num_warps"] == 2
    result = worker.run_check(spec, {"BLOCK_SIZE": 512, "num_warps": 2, "num_stages": 3}, shape)
    assert result["status"] == "ok", result["message"]


def test_a_wrapper_of_the_files_own_keeps_being_called(tmp_path):
    # @torch.inference_mode() over ensure_contiguous (functools.wraps) over the innermost plain
    # function that leads to the launch (through an autograd Function's apply)
    tasks = _tasks("rms_norm_module.py", tmp_path)["_rms_norm_fwd_kernel"]
    t = tasks["call rms_norm_module:rms_norm_inference"]
    assert t["check"] == "ok", t.get("check_message")
    assert not any("takes arguments" in n for n in t["notes"]), t["notes"]


def test_constexprs_between_pointers_land_on_their_parameters(tmp_path):
    tasks = _tasks("rms_norm_module.py", tmp_path)
    t = tasks["_row_scale_kernel"]["grid"]  # launched from nn.Module.forward: the kernel
    assert t["check"] == "ok", t.get("check_message")
    launch = json.load(open(t["task"]))["launch"]
    assert launch["args"][:3] == ["x_ptr", "300", "y_ptr"], launch
    assert launch["grid"].startswith("(D0,"), launch


def test_a_launch_from_an_autograd_function_keeps_what_its_forward_computed(tmp_path):
    tasks = _tasks("rms_norm_module.py", tmp_path)
    t = tasks["_rms_norm_bwd_kernel"]["grid"]  # backward(ctx, dY): nothing to call by name
    assert t["check"] == "ok", t.get("check_message")
    launch = json.load(open(t["task"]))["launch"]
    # the dtype constexpr between pointers, the rows per program the backward computed
    assert launch["args"][4] == "tl.float32" and launch["args"][-1] == "3", launch


def test_a_function_taking_a_config_dataclass_is_called_with_it_made_again(tmp_path):
    tasks = _tasks("rms_norm_module.py", tmp_path)["_rms_norm_fwd_kernel"]
    t = tasks["call rms_norm_module:rms_norm"]  # rms_norm(x, w, cfg: NormConfig)
    assert t["check"] == "ok", t.get("check_message")
    launch = json.load(open(t["task"]))["launch"]
    assert launch["kwargs"]["cfg"] == "NormConfig(eps=1e-06, casting_mode=1)", launch


def test_a_wrapper_asserting_divisibility_passes_at_the_check_shape(tmp_path):
    (t,) = _tasks("qkv_split_heads.py", tmp_path)["_split_qkv_kernel"].values()
    assert t["launch"] == "call qkv_split_heads:split_qkv_heads"
    assert t["check"] == "ok", t.get("check_message")
    width = [v for v in t["check_shape"].values() if v > 100]
    assert width and all(w % 15 == 0 for w in width), t["check_shape"]


def test_check_sizes_keep_small_odd_factors_and_alignment():
    assert capture._check_size(15360, set()) % (3 * 40) == 0
    assert capture._check_size(480, set()) % 15 == 0
    assert capture._check_size(4096, set()) == 128
    assert capture._check_size(200, set()) == 120  # 8 (exactly), 5, and 3 to reach 96


def test_a_check_shape_under_the_cap_halves_head_counts_before_aligned_lengths():
    """(48 heads, 2048 tokens, head dim 64) is over the interpreter's cap at 48 x 128 x 64:
    the head count halves, the sequence length keeps the multiple of 128 a wrapper asserts."""
    got = capture._check_shape({"H": 48, "S": 2048, "D": 64}, [["H", "S", "D"]], {64})
    assert got == {"H": 24, "S": 128, "D": 64}


def test_a_failed_assertion_names_its_file_line_and_statement():
    import sys
    sys.path.insert(0, REALISTIC)
    try:
        import qkv_split_heads
    finally:
        sys.path.remove(REALISTIC)
    with pytest.raises(AssertionError) as e:
        qkv_split_heads.split_qkv_heads(torch.randn(4, 100, dtype=torch.float16), 5)
    message = worker.classify(e.value)["message"]
    assert "qkv_split_heads.py:" in message and \
        "assert qkv.shape[1] % (3 * num_heads) == 0" in message, message
    with pytest.raises(AssertionError) as e:
        qkv_split_heads.split_qkv_heads(torch.randn(480, 4, dtype=torch.float16).t(), 5)
    message = worker.classify(e.value)["message"]
    assert message.endswith("assert qkv.is_contiguous() and qkv.stride(-1) == 1"), message


@pytest.mark.parametrize("make", [
    lambda: torch.randn(1, 8, 5, 6).to(memory_format=torch.channels_last),  # batch 1
    lambda: torch.randn(7, 1, 5).transpose(0, 2),
])
def test_inputs_keep_a_recorded_dense_layout(make):
    x = make()
    spec = capture._input_spec("x", capture._describe_value(x), capture._Symbols({}), False)
    spec.setdefault("scale", 1)
    made = worker._make_tensor(dict(spec, shape=list(x.shape)), {}, torch.Generator(), "cpu",
                               "x")
    def strides(t):  # a dimension of size 1 has no stride that matters
        return [s for s, n in zip(t.stride(), t.shape) if n > 1]
    assert made.shape == x.shape and strides(made) == strides(x), spec
    if x.dim() == 4:
        assert made.is_contiguous(memory_format=torch.channels_last)
