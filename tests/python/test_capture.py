"""Launch capture: a user's own code run once, every launch turned into a task that passes."""

import json
import os
import sys

import pytest

from conftest import FIXTURES
from tforge_worker import capture

REALISTIC = os.path.join(FIXTURES, "realistic")

# file -> {kernel: (launch form, tuned parameters that must be in the space)}
EXPECTED = {
    "gemm_autotune.py": {"matmul_kernel": ("call gemm_autotune:matmul",
                                           {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"})},
    "rms_norm_liger.py": {"_rms_norm_forward_kernel": ("call rms_norm_liger:rms_norm_forward",
                                                       {"BLOCK_SIZE", "num_warps"})},
    "matvec_heuristics.py": {"matvec_kernel": ("call matvec_heuristics:matvec",
                                               {"BLOCK_M", "BLOCK_K"})},
    "attention_causal.py": {"_attn_fwd": ("grid", {"BLOCK_M", "BLOCK_N"})},
    "device_queries.py": {"add_kernel": ("call device_queries:add", {"BLOCK_SIZE"}),
                          "add_persistent_kernel": ("call device_queries:add_persistent",
                                                    {"BLOCK_SIZE"})},
    "softmax_inplace.py": {"softmax_kernel": ("call softmax_inplace:softmax", {"BLOCK_SIZE"}),
                           "scale_shift_kernel": ("call softmax_inplace:scale_shift_",
                                                  {"BLOCK_SIZE"})},
    "fused_xent.py": {"cross_entropy_fwd_kernel": ("call fused_xent:cross_entropy_forward",
                                                   {"BLOCK_SIZE"})},
    "glu_act.py": {"swiglu_fwd_kernel": ("grid", {"BLOCK_SIZE"}),
                   "geglu_tanh_fwd_kernel": ("grid", {"BLOCK_SIZE"})},
    "geglu_autograd.py": {"_geglu_fwd": ("call geglu_autograd:geglu_forward", {"BLOCK_SIZE"}),
                          "_geglu_bwd": ("call geglu_autograd:geglu_backward", {"BLOCK_SIZE"})},
    "moe_grouped_gemm.py": {"moe_grouped_gemm_kernel": ("call moe_grouped_gemm:invoke_moe_gemm",
                                                        {"BLOCK_SIZE_N", "BLOCK_SIZE_K"})},
    "per_token_int8_quant.py": {"per_token_quant_int8_kernel": (
        "call per_token_int8_quant:per_token_quant_int8", {"BLOCK"})},
    "paged_decode_attention.py": {"paged_decode_attention_kernel": (
        "call paged_decode_attention:paged_decode_attention", {"num_warps"})},
    "rmsnorm_split.py": {"row_sumsq_kernel": ("call rmsnorm_split:rms_norm", {"BLOCK_N"}),
                         "rms_apply_kernel": ("call rmsnorm_split:rms_norm", {"BLOCK"})},
    "rope_logsoftmax.py": {"rope_fwd_kernel": ("call rope_logsoftmax:apply_rope", {"num_warps"}),
                           "triton_per_fused__log_softmax_0": (
                               "call rope_logsoftmax:log_softmax_lastdim", {"XBLOCK"})},
    "bp_linear.py": {"linear_bias_act_kernel": ("call bp_linear:linear",
                                                {"BLOCK_M", "BLOCK_N", "BLOCK_K"})},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_init_turns_each_demo_into_passing_tasks(name, tmp_path):
    got = capture.init(os.path.join(REALISTIC, name), str(tmp_path))
    assert got["error"] is None
    by_kernel = {}
    for t in got["tasks"]:
        by_kernel.setdefault(t["kernel"], t)
        assert t["check"] == "ok", (t["task"], t.get("check_message"))
        doc = json.load(open(t["task"]))  # an ordinary task file
        assert doc["kernel"] == t["kernel"] and doc["baseline"]
    assert set(by_kernel) == set(EXPECTED[name])
    for kernel, (form, tuned) in EXPECTED[name].items():
        t = by_kernel[kernel]
        assert t["launch"] == form
        assert tuned <= set(t["space"]["params"]), t["space"]
        for k, v in t["baseline"].items():  # the recorded config is a point of the space
            if k in t["space"]["params"]:
                assert v in t["space"]["params"][k], (k, v)


def test_a_block_that_must_cover_the_row_is_a_constraint_over_a_shape_symbol(tmp_path):
    got = capture.init(os.path.join(REALISTIC, "rms_norm_liger.py"), str(tmp_path))
    (t,) = got["tasks"]
    assert t["space"]["constraints"] == ["BLOCK_SIZE >= n_cols"]
    doc = json.load(open(t["task"]))
    assert doc["launch"]["returns"][0] and doc["reference"] == "baseline"


def test_a_kernel_writing_its_input_is_marked(tmp_path):
    got = capture.init(os.path.join(REALISTIC, "softmax_inplace.py"), str(tmp_path),
                       kernel="scale_shift_kernel")
    (t,) = got["tasks"]
    doc = json.load(open(t["task"]))
    assert doc["outputs"] == [{"name": "x", "atol": 1e-4, "rtol": 1e-4, "poison": False}]
    assert doc["writes_inputs"] is True


def test_indices_are_drawn_where_they_are_valid(tmp_path):
    # labels with ignore_index -100 index the class dimension: no sentinel, bounded by it, so
    # the check shape's fewer classes still bound them
    got = capture.init(os.path.join(REALISTIC, "fused_xent.py"), str(tmp_path))
    doc = json.load(open(got["tasks"][0]["task"]))
    assert [i["init"] for i in doc["inputs"] if i["name"] == "target"] == ["randint:0:n_cols"]
    assert doc["shapes"]["check"][0]["n_cols"] < doc["shapes"]["tune"][0]["n_cols"]
    # expert ids index the experts
    got = capture.init(os.path.join(REALISTIC, "moe_grouped_gemm.py"), str(tmp_path / "moe"))
    doc = json.load(open(got["tasks"][0]["task"]))
    (ids,) = [i for i in doc["inputs"] if i["name"] == "topk_ids"]
    experts = ids["init"].split(":")[2]
    assert doc["shapes"]["tune"][0][experts] == 8


def test_offsets_keep_their_values_and_the_task_its_shape(tmp_path):
    # cu_seqlens of a packed batch: random offsets would read and write out of bounds
    got = capture.init(os.path.join(REALISTIC, "attention_varlen.py"), str(tmp_path))
    (t,) = got["tasks"]
    doc = json.load(open(t["task"]))
    (cu,) = [i for i in doc["inputs"] if i["name"] == "cu_seqlens"]
    assert cu["init"] == "values" and cu["values"] == [0, 70, 103, 231]
    assert doc["shapes"]["check"] == doc["shapes"]["tune"] and t["check"] == "ok"
    # the wrapper's grid counts query blocks of its own max_seqlen, which the kernel never sees
    assert doc["launch"]["grid"].startswith("(cdiv(max_seqlen, BLOCK_M),")
    from tforge_worker import load_task, run_check
    task = load_task(t["task"])
    small = {**task["baseline"][0], "BLOCK_M": 16}
    assert run_check(task, small, task["shapes"]["check"][0])["status"] == "ok"


def test_launches_that_differ_in_a_flag_are_tasks_of_their_own(tmp_path):
    # RoPE with INTERLEAVED False, then True: two kernels, at one shape
    got = capture.init(os.path.join(REALISTIC, "rope_logsoftmax.py"), str(tmp_path),
                       kernel="rope_fwd_kernel")
    assert len(got["tasks"]) == 2 and all(t["check"] == "ok" for t in got["tasks"])


def test_an_output_from_torch_empty_is_not_read_back(tmp_path):
    # the kernel only stores to c_ptr: whatever torch.empty_like left there is no input
    got = capture.init(os.path.join(REALISTIC, "glu_act.py"), str(tmp_path),
                       kernel="swiglu_fwd_kernel")
    doc = json.load(open(got["tasks"][0]["task"]))
    assert [i["init"] for i in doc["inputs"] if i["name"] == "c_ptr"] == ["zeros"]
    assert doc["outputs"] == [{"name": "c_ptr", "atol": 1e-4, "rtol": 1e-4}]  # poisoned
    assert "writes_inputs" not in doc


def test_a_compile_sees_real_indices(tmp_path):
    # the wrapper routes tokens by expert id on the host: garbage ids would fail the launch
    from tforge_worker.build import _compile_inputs
    from tforge_worker.worker import get, load_task
    got = capture.init(os.path.join(REALISTIC, "moe_grouped_gemm.py"), str(tmp_path))
    task = load_task(got["tasks"][0]["task"])
    shape = task["shapes"]["check"][0]
    made = _compile_inputs(get(task), shape, "cpu")
    experts = shape[task["inputs"][[i["name"] for i in task["inputs"]].index("topk_ids")]
                    ["init"].split(":")[2]]
    assert 0 <= int(made["topk_ids"].min()) and int(made["topk_ids"].max()) < experts


def test_a_hard_coded_block_gets_a_grid_over_the_kernels_arguments(tmp_path):
    script = tmp_path / "run_add.py"
    script.write_text(
        "import sys, torch\n"
        f"sys.path.insert(0, {os.path.join(FIXTURES, 'real_shapes')!r})\n"
        "import rows\n"
        "a = torch.randn(5000); b = torch.randn(5000)\n"
        "assert torch.allclose(rows.add(a, b), a + b)\n")
    got = capture.capture(["python", str(script)], "tasks", cwd=str(tmp_path))
    (t,) = got["tasks"]
    doc = json.load(open(t["task"]))
    assert doc["launch"]["call"] == "rows:add"
    assert doc["launch"]["grid"] == "(cdiv(n_elements, BLOCK),)"
    assert t["check"] == "ok" and 512 in t["space"]["params"]["BLOCK"]


def test_a_head_count_equal_to_a_block_count_stays_a_head_count(tmp_path):
    # batch 1 x 2 heads = 2 programs on axis 1, and 64 / BLOCK_M (32) = 2 too: the analysis
    # says axis 1's program id is multiplied by no block, so the grid keeps counting heads
    script = tmp_path / "run_attention.py"
    script.write_text(
        "import sys, torch\n"
        f"sys.path.insert(0, {REALISTIC!r})\n"
        "import attention_causal\n"
        "q, k, v = (torch.randn(1, 2, 64, 32, dtype=torch.float16) for _ in range(3))\n"
        "attention_causal.attention(q, k, v, True, 0.2)\n")
    got = capture.capture([sys.executable, str(script)], "tasks", cwd=str(tmp_path))
    (t,) = got["tasks"]
    doc = json.load(open(t["task"]))
    assert doc["launch"]["grid"] == "(cdiv(N_CTX, BLOCK_M), H, 1)"
    assert t["check"] == "ok"


def test_a_failing_script_is_reported_with_what_was_captured(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("raise RuntimeError('before any launch')\n")
    got = capture.capture([sys.executable, str(script)], "tasks", cwd=str(tmp_path))
    assert got["launches"] == 0 and got["tasks"] == []
    assert got["error"].startswith("RuntimeError: before any launch")


def test_a_missing_script_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"no_such\.py: no such script"):
        capture.capture(["python", "no_such.py"], "tasks", cwd=str(tmp_path))


def test_a_function_launching_twice_returns_for_both_launches(tmp_path):
    # as an autotuner does: benchmark launches first, then the chosen one; the task is made
    # from the last, and the function's return value belongs to every launch it made
    script = tmp_path / "twice.py"
    script.write_text(
        "import sys, torch, triton\n"
        f"sys.path.insert(0, {os.path.join(FIXTURES, 'real_shapes')!r})\n"
        "import rows\n"
        "def twice(a, b):\n"
        "    out = torch.empty_like(a)\n"
        "    for block in (256, 1024):\n"
        "        rows._add_kernel[(triton.cdiv(a.numel(), block),)](a, b, out, a.numel(),\n"
        "                                                          BLOCK=block)\n"
        "    return out\n"
        "twice(torch.randn(3000), torch.randn(3000))\n")
    got = capture.capture(["python", str(script)], "tasks", cwd=str(tmp_path))
    (t,) = got["tasks"]
    assert t["launches"] == 2 and t["baseline"]["BLOCK"] == 1024
    doc = json.load(open(t["task"]))
    assert doc["launch"]["returns"] == ["out0"] and doc["outputs"][0]["name"] == "out0"


def test_a_transposed_weight_stays_transposed(tmp_path):
    # linear(x, w) passes w.t(): the task's tensor has the strides the kernel was launched with
    from tforge_worker import load_task, make_inputs
    got = capture.init(os.path.join(REALISTIC, "bp_linear.py"), str(tmp_path))
    task = load_task(got["tasks"][0]["task"])
    (w,) = [i for i in task["inputs"] if i["name"] == "weight_t"]
    assert w["order"] == [1, 0]
    shape = task["shapes"]["check"][0]
    made = make_inputs(task, shape, 0, "cpu")["weight_t"]
    assert list(made.shape) == [shape["K"], shape["N"]] and made.stride() == (1, shape["K"])
