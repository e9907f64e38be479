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
