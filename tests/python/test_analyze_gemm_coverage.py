"""The gemm record widened to third-party spellings of a GEMM (issue 36, item 4): FlagGems'
addmm and bmm and flash-linear-attention's matmul, written as our own fixtures under
tests/transforms/descriptors/, and the near misses that must stay unfound."""

import os
import textwrap

from tforge_worker.analyze import analyze

DESCRIPTORS = os.path.join(os.path.dirname(__file__), "..", "transforms", "descriptors")


def kernel_of(path, name):
    return {k["name"]: k for k in analyze(path)["kernels"]}[name]


def test_epilogue_rebinding_the_accumulator():
    """addmm's shape: program ids through a jit helper, the accumulator rebound after the loop by
    an alpha / beta epilogue. Found; the stored value is no longer the loop's sum alone (split-K
    may not add partial tiles of it), and no tile body (no tl.program_id of its own)."""
    g = kernel_of(os.path.join(DESCRIPTORS, "gemm_epilogue.py"), "addmm_kernel")["gemm"]
    assert (g["m"], g["n"], g["k"], g["acc"]) == ("M", "N", "K", "accumulator")
    assert g["c"]["value"] == "c" and g["stores_acc"] is False
    assert (g["a"]["row_start"], g["c"]["col_start"]) == ("pid_m * BLOCK_M", "pid_n * BLOCK_N")
    assert [g[x]["batch"] for x in "abc"] == [None] * 3 and g["tile_body"] is None


def test_batch_axis():
    """A base moved along a batch axis through a name (A, C) and in place (B): each matrix's
    pointer, index and the factors of its batch stride; no tile body."""
    g = kernel_of(os.path.join(DESCRIPTORS, "gemm_batched.py"), "batched_kernel")["gemm"]
    assert [g[x]["base"] for x in "abc"] == ["a_batch", "b", "c_batch"]
    assert [g[x]["batch"] for x in "abc"] == [
        {"pointer": "a", "index": "i_b", "stride": ["stride_ab"]},
        {"pointer": "b", "index": "i_b", "stride": ["K", "N"]},
        {"pointer": "c", "index": "i_b", "stride": ["stride_cb"]}]
    assert (g["b"]["stride_row"], g["b"]["stride_col"]) == ("N", "1")
    assert g["a"]["row_start"] == "i_m * BM" and g["tile_body"] is None


def test_gathered_rows_and_loaded_batch_stride():
    path = os.path.join(DESCRIPTORS, "gemm_gathered.py")
    assert kernel_of(path, "gathered_rows_kernel")["gemm"] is None
    assert kernel_of(path, "loaded_stride_kernel")["gemm"] is None


GEMM = """\
    import triton
    import triton.language as tl


    @triton.jit
    def k(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_bk, s_cm, s_ab,
          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        i_b = tl.program_id(2)
    {before}
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
    {after}
        a_ptrs = {a_base} + rm[:, None] * s_am + rk[None, :]
        b_ptrs = b_ptr + rk[:, None] * s_bk + rn[None, :]
    {late}
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
            a_ptrs += BK
            b_ptrs += BK * s_bk
        tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))
    """


def gemm_of(tmp_path, before="", after="", a_base="a_ptr", late=""):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(GEMM).format(
        before=textwrap.indent(before, "    "), after=textwrap.indent(after, "    "),
        late=textwrap.indent(late, "    "), a_base=a_base))
    return kernel_of(str(path), "k")["gemm"]


def test_the_template_is_found(tmp_path):
    assert gemm_of(tmp_path) is not None
    assert gemm_of(tmp_path, before="a_ptr += i_b * s_ab")["a"]["batch"] == \
        {"pointer": "a_ptr", "index": "i_b", "stride": ["s_ab"]}


def test_a_tile_start_rebound_after_its_offsets(tmp_path):
    """`pid_m` bound again after the rows were made from it (by a tuple from a call, as a
    swizzle does): the load's `pid_m * BM` would name another row. Unfound; bound before the
    rows (flash-linear-attention's swizzle), found."""
    assert gemm_of(tmp_path, after="pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, 4, 4, 2)") is None
    assert gemm_of(tmp_path, before="pid_m, pid_n = tl.swizzle2d(pid_m, pid_n, 4, 4, 2)") \
        is not None


def test_batch_offsets_that_prove_nothing(tmp_path):
    """The base moved after the tile is made, by a tile, or by a constexpr stride: unfound."""
    assert gemm_of(tmp_path, late="a_ptr += i_b * s_ab") is None
    assert gemm_of(tmp_path, before="a_b = a_ptr + i_b * s_ab", a_base="a_b") is not None
    assert gemm_of(tmp_path, before="a_b = a_ptr + tl.arange(0, BK) * s_ab", a_base="a_b") \
        is None
    assert gemm_of(tmp_path, before="a_b = a_ptr + i_b * BK", a_base="a_b") is None


def test_tiles_made_in_the_loop():
    """mm's shape: A's tile made in the load itself, B's by a name of the loop, from K offsets
    the loop makes; no advance (split-K refuses it), a named tile keeps its statement."""
    g = kernel_of(os.path.join(DESCRIPTORS, "gemm_loop_pointers.py"), "mm_kernel")["gemm"]
    assert (g["a"]["ptrs"], g["a"]["ptrs_stmt"], g["a"]["advance"]) == (None, None, None)
    assert g["b"]["ptrs"] == "b_ptrs" and g["b"]["advance"] is None
    assert (g["k_offset"], g["c"]["base"], g["c"]["ptrs"]) == ("start_k", "C", "C")
    assert g["c"]["row_start"] == "pid_m * BLOCK_M" and g["stores_acc"] is False


LOOP_GEMM = """\
    import triton
    import triton.language as tl


    @triton.jit
    def k(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_bk, s_cm,
          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            rk = {rk}
            a = tl.load(a_ptr + rm[:, None] * s_am + rk[None, :], mask={mask}, other=0.0)
            b = tl.load(b_ptr + rk[:, None] * s_bk + rn[None, :], mask=rk[:, None] < K, other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))
    """


def loop_gemm_of(tmp_path, rk="k + tl.arange(0, BK)", mask="rk[None, :] < K"):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(LOOP_GEMM).format(rk=rk, mask=mask))
    return kernel_of(str(path), "k")["gemm"]


def test_offsets_made_in_the_loop_that_prove_nothing(tmp_path):
    """K offsets made in the loop must start where the iteration does and be bounded by K
    itself (they already hold the start); anything else is unfound."""
    assert loop_gemm_of(tmp_path) is not None
    assert loop_gemm_of(tmp_path, mask="(rk < K)[None, :]") is not None
    assert loop_gemm_of(tmp_path, rk="k + 1 + tl.arange(0, BK)") is None
    assert loop_gemm_of(tmp_path, rk="tl.arange(0, BK)") is None
    assert loop_gemm_of(tmp_path, mask="rk[None, :] < K - k") is None
