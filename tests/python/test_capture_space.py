"""The space capture infers for a real file: what may vary (the file's own autotune configs say
it), what must not (counts, strides, padded head counts), and grids recomputed from the blocks
they count. The real test of a space is that its points compute the right answer: a few of each
small space are run through the task's check."""

import json
import os
import random
import textwrap

import pytest

from conftest import FIXTURES
from tforge_worker import analyze, capture, load_task, run_check

REALISTIC = os.path.join(FIXTURES, "realistic")


def _init(name, tmp_path):
    got = capture.init(os.path.join(REALISTIC, name), str(tmp_path))
    assert got["error"] is None
    (t,) = {t["kernel"]: t for t in got["tasks"]}.values()
    assert t["check"] == "ok", t.get("check_message")
    for k, v in t["baseline"].items():  # the recorded config is a point of the space
        if k in t["space"]["params"]:
            assert v in t["space"]["params"][k], (k, v)
    return t, json.load(open(t["task"]))


def test_the_autotune_configs_vary_blocks_the_analysis_alone_would_fix(tmp_path):
    # tutorial-06 attention: loads without masks (the wrapper asserts N_CTX % 128 == 0), so
    # BLOCK_M and BLOCK_N are unmasked arange extents; the configs vary them all the same
    t, doc = _init("attention_autotune.py", tmp_path)
    params = t["space"]["params"]
    assert {64, 128} <= set(params["BLOCK_M"]) and {32, 64} <= set(params["BLOCK_N"])
    assert {3, 4} <= set(params["num_stages"]) and {4, 8} <= set(params["num_warps"])
    assert "HEAD_DIM" not in params and "STAGE" not in params
    assert doc["baseline"]["BLOCK_M"] == 64 and doc["baseline"]["BLOCK_N"] == 32


def test_the_config_list_is_read_through_comprehensions_and_filters():
    ir = analyze.analyze(os.path.join(REALISTIC, "attention_autotune.py"), "_attn_fwd")
    (k,) = ir["kernels"]
    by_name = {t["name"]: t for t in k["tunables"]}
    # the list comprehension behind list(filter(keep, configs)), and the interpreter's one-config
    # list too: every value either may hold
    assert by_name["BLOCK_M"]["levels"] == [64, 128]
    assert by_name["BLOCK_N"]["levels"] == [32, 64]
    assert by_name["num_warps"]["levels"] == [4, 8]
    assert "levels" not in by_name["HEAD_DIM"] and by_name["HEAD_DIM"]["kind"] == "fixed"


def test_counts_strides_and_per_group_channels_are_not_tuned(tmp_path):
    # a grouped convolution: stride, padding, dilation appear in the masks, the per-group
    # channel count bounds a loop and a mask; none of them is a tile extent
    t, doc = _init("conv1d_grouped.py", tmp_path)
    params = t["space"]["params"]
    for name in ("stride", "padding", "dilation", "weight_c", "weight_length", "HAS_BIAS"):
        assert name not in params, (name, params)
    assert {"BLOCK_NI_LO", "BLOCK_CI", "BLOCK_CO"} <= set(params)
    # batch and positions flattened into one axis: the function's own text, over the kernel's
    # arguments, recomputed from the config
    assert doc["launch"]["grid"] == \
        "(cdiv(in_n * out_length, BLOCK_NI_LO), cdiv(out_c, BLOCK_CO), groups)"


def test_a_padded_head_count_is_not_tuned(tmp_path):
    # BLOCK_H = max(16, next_power_of_2(group)): the output is allocated with BLOCK_H rows per
    # KV head and stored without a head mask
    t, doc = _init("gqa_decode.py", tmp_path)
    params = t["space"]["params"]
    assert "BLOCK_H" not in params and "HEAD_DIM" not in params
    assert "BLOCK_N" in params
    assert any("BLOCK_H (must fit the buffer" in n for n in t["notes"]), t["notes"]


def test_a_host_allocation_sized_by_a_block_fixes_it(tmp_path):
    # the same padding with a masked store: the wrapper still allocates and slices by it
    path = tmp_path / "padded.py"
    path.write_text(textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def _rows_kernel(x_ptr, o_ptr, n_heads, BLOCK_H: tl.constexpr):
            offs = tl.arange(0, BLOCK_H)
            x = tl.load(x_ptr + offs, mask=offs < n_heads, other=0.0)
            tl.store(o_ptr + offs, x * 2, mask=offs < n_heads)

        def rows(x):
            BLOCK_H = max(16, triton.next_power_of_2(x.numel()))
            o = torch.zeros(BLOCK_H, device=x.device, dtype=x.dtype)
            _rows_kernel[(1,)](x, o, x.numel(), BLOCK_H=BLOCK_H)
            return o[:x.numel()]
    '''))
    (k,) = analyze.analyze(str(path))["kernels"]
    (t,) = [t for t in k["tunables"] if t["name"] == "BLOCK_H"]
    assert t["kind"] == "fixed" and "sizes a tensor with it" in t["why"], t


def test_a_split_k_grid_is_the_split_and_the_tile_counts(tmp_path):
    # M = 48, N = 40, K = 64, blocks of 32, SPLIT_K = 2: cdiv(K, BLOCK_K) is 2 as well, and
    # cdiv(K, BLOCK_K) squared 4 as the tile count: neither is what the program ids count
    t, doc = _init("splitk_gemm.py", tmp_path)
    assert doc["launch"]["grid"] == "(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), 1, SPLIT_K)"
    assert "SPLIT_K" not in t["space"]["params"]
    assert {"BLOCK_M", "BLOCK_N", "BLOCK_K"} <= set(t["space"]["params"])


def test_the_grid_formula_takes_no_coincidental_product():
    # two counts of one size and one block are no tile count
    axes = {0: {"BLOCK_M", "BLOCK_N"}, 2: {"BLOCK_K"}}
    formula, _ = capture._grid_formula((4, 1, 2), {"M": 48, "N": 40, "K": 64},
                                       {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, axes)
    assert formula.startswith("(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), 1,")


def _points(task, shape, count, seed=0):
    """The baseline with each tuned constexpr at its smallest and largest value, then random
    points: those the space's constraints allow."""
    base = dict(task["baseline"][0])
    space = task["space"]["params"]
    names = [n for n in space if n not in ("num_warps", "num_stages")]  # no effect on the CPU
    points = [{**base, n: v} for n in names for v in (min(space[n]), max(space[n]))]
    rng = random.Random(seed)
    points += [{**base, **{n: rng.choice(space[n]) for n in names}} for _ in range(count)]
    out = []
    for p in points:
        if p not in out and all(analyze._holds(c, {**shape, **p}) is not False
                                for c in task["space"].get("constraints", [])):
            out.append(p)
    return out


@pytest.mark.parametrize("name", ["attention_autotune.py", "conv1d_grouped.py",
                                  "gqa_decode.py", "splitk_gemm.py"])
def test_every_sampled_point_of_the_space_computes_the_right_answer(name, tmp_path):
    t, _ = _init(name, tmp_path)
    task = load_task(t["task"])
    shape = task["shapes"]["check"][0]
    points = _points(task, shape, 2)
    assert len(points) > 2
    for p in points:
        got = run_check(task, p, shape, seed=1)
        assert got["status"] == "ok", (p, got.get("message"))


def test_a_block_the_grid_counts_in_a_way_the_task_cannot_recompute_is_fixed(tmp_path):
    # the grid counts row blocks of x.shape[0], a size the kernel never gets (it takes the
    # element count): the task cannot recompute it, so BLOCK_ROWS keeps its value
    path = tmp_path / "row_scale.py"
    path.write_text(textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def _row_scale_kernel(x_ptr, s_ptr, o_ptr, n_elements, n_cols,
                              BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
            cols = tl.arange(0, BLOCK_COLS)
            offs = rows[:, None] * n_cols + cols[None, :]
            mask = (offs < n_elements) & (cols[None, :] < n_cols)
            s = tl.load(s_ptr + rows, mask=rows * n_cols < n_elements, other=0.0)
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            tl.store(o_ptr + offs, x * s[:, None], mask=mask)

        def row_scale(x, s):
            o = torch.empty_like(x)
            BLOCK_ROWS = 16
            grid = (triton.cdiv(x.shape[0], BLOCK_ROWS),)
            _row_scale_kernel[grid](x, s, o, x.numel(), x.shape[1], BLOCK_ROWS=BLOCK_ROWS,
                                    BLOCK_COLS=triton.next_power_of_2(x.shape[1]))
            return o

        if __name__ == "__main__":
            x, s = torch.randn(50, 24), torch.randn(50)
            torch.testing.assert_close(row_scale(x, s), x * s[:, None])
    '''))
    got = capture.init(str(path), str(tmp_path / "tasks"))
    (t,) = got["tasks"]
    assert t["check"] == "ok", t.get("check_message")
    assert "BLOCK_ROWS" not in t["space"]["params"] and "BLOCK_COLS" in t["space"]["params"]
    assert any("BLOCK_ROWS (the grid counts its blocks" in n for n in t["notes"]), t["notes"]
    task = load_task(t["task"])
    shape = task["shapes"]["check"][0]
    for p in _points(task, shape, 2):
        assert run_check(task, p, shape, seed=1)["status"] == "ok", p


def test_a_direct_launch_of_split_k_counts_the_split_not_a_k_block_count(tmp_path):
    # launched from a script's function that takes a dict: the kernel is launched directly,
    # with no grid text to read; the split is SPLIT_K's number, since the K loop strides by
    # BLOCK_K * SPLIT_K, not cdiv(K, BLOCK_K), which has the same value here
    script = tmp_path / "run_splitk.py"
    script.write_text(textwrap.dedent(f'''
        import sys, torch, triton
        sys.path.insert(0, {REALISTIC!r})
        import splitk_gemm

        def run(a, b, opts):
            (M, K), N = a.shape, b.shape[1]
            c = torch.zeros(M, N, dtype=torch.float32)
            grid = (triton.cdiv(M, opts["bm"]) * triton.cdiv(N, opts["bn"]), 1, opts["split"])
            splitk_gemm._splitk_gemm_kernel[grid](
                a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1), BLOCK_M=opts["bm"], BLOCK_N=opts["bn"],
                BLOCK_K=32, GROUP_M=8, SPLIT_K=opts["split"])
            return c

        a, b = torch.randn(48, 64, dtype=torch.float16), torch.randn(64, 40, dtype=torch.float16)
        c = run(a, b, {{"bm": 32, "bn": 32, "split": 2}})
        torch.testing.assert_close(c, a.float() @ b.float(), atol=1e-2, rtol=1e-3)
    '''))
    got = capture.capture(["python", str(script)], "tasks", cwd=str(tmp_path))
    (t,) = got["tasks"]
    assert t["launch"] == "grid" and t["check"] == "ok", t
    doc = json.load(open(t["task"]))
    assert doc["launch"]["grid"] == "(cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), 1, 2)"
    task = load_task(t["task"])
    shape = task["shapes"]["check"][0]
    for p in _points(task, shape, 2):
        assert run_check(task, p, shape, seed=1)["status"] == "ok", p


def test_a_condition_the_analysis_cannot_decide_keeps_both_branches(tmp_path):
    # tutorial 06 picks its stages by the backend; a config list made by a function call
    # says nothing, and no level is made up
    path = tmp_path / "tuned.py"
    path.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        def is_hip():
            return triton.runtime.driver.active.get_current_target().backend == "hip"

        def get_configs():
            return [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})]

        configs = [triton.Config({"BLOCK": b}, num_stages=s, num_warps=4)
                   for b in [64, 128] for s in ([1] if is_hip() else [3, 4])
                   if b * s < 256]

        @triton.autotune(configs, key=["n"])
        @triton.jit
        def scale(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        @triton.autotune(get_configs(), key=["n"])
        @triton.jit
        def shift(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
    '''))
    kernels = {k["name"]: {t["name"]: t for t in k["tunables"]}
               for k in analyze.analyze(str(path))["kernels"]}
    assert kernels["scale"]["BLOCK"]["levels"] == [64, 128]
    # both branches of the backend test, each config through the filter: 4 stages never pass
    assert kernels["scale"]["num_stages"]["levels"] == [1, 3]
    assert all("levels" not in t for t in kernels["shift"].values())
    assert kernels["shift"]["BLOCK"]["kind"] == "block"


def test_expert_counts_and_top_k_are_not_tiles(tmp_path):
    # a MoE router: softmax over the experts, then the top-k picked one at a time; the expert
    # count bounds the mask of a block that covers it, top_k counts the picks
    path = tmp_path / "router.py"
    path.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def topk_softmax_kernel(logits_ptr, weights_ptr, ids_ptr, stride_t,
                                NUM_EXPERTS: tl.constexpr, TOP_K: tl.constexpr,
                                BLOCK_E: tl.constexpr):
            t = tl.program_id(0)
            offs = tl.arange(0, BLOCK_E)
            x = tl.load(logits_ptr + t * stride_t + offs, mask=offs < NUM_EXPERTS,
                        other=-float("inf"))
            p = tl.exp(x - tl.max(x, 0))
            p = p / tl.sum(p, 0)
            for k in tl.static_range(TOP_K):
                best = tl.argmax(p, 0)
                tl.store(weights_ptr + t * TOP_K + k, tl.max(p, 0))
                tl.store(ids_ptr + t * TOP_K + k, best)
                p = tl.where(offs == best, -1.0, p)
    '''))
    (k,) = analyze.analyze(str(path))["kernels"]
    by_name = {t["name"]: t for t in k["tunables"]}
    assert by_name["NUM_EXPERTS"]["kind"] == "fixed", by_name["NUM_EXPERTS"]
    assert by_name["TOP_K"]["kind"] == "fixed"
    assert by_name["BLOCK_E"]["kind"] == "block" and by_name["BLOCK_E"]["covers_row"]
