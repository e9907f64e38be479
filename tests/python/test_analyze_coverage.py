"""The analysis widened to third-party spellings of the patterns the source transforms rewrite
(issue 36, item 4): each spelling found on its fixture under tests/transforms/coverage/, and the
near misses that must stay unfound."""

import os
import textwrap

from tforge_worker.analyze import analyze

COVERAGE = os.path.join(os.path.dirname(__file__), "..", "transforms", "coverage")


def kernel_of(path, name):
    found = {k["name"]: k for k in analyze(path)["kernels"]}
    return found[name]


def cut_texts(path, tail):
    data = open(path, "rb").read()
    return [data[d["start"]:d["end"]].decode() for d in tail["drops"]]


def test_masks_held_in_names():
    """`mask = (rows[:, None] < N) & (cols < K)` and `(rows < N)[:, None] & ...`, set in the
    loop's body and used as `mask=`: the rows' bound is cut from the assignment."""
    path = os.path.join(COVERAGE, "softmax_columns.py")
    tails = kernel_of(path, "softmax_columns_kernel")["loop_tails"]
    assert [(t["form"], t["var"], t["size"], t["block"]) for t in tails] == \
        [("step", "row_start", "N", "TILE_N")] * 2
    assert cut_texts(path, tails[0]) == ["(rows[:, None] < N) & "]
    assert cut_texts(path, tails[1]) == ["(rows < N)[:, None] & "]


def source_kernel(tmp_path, body):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.jit
        def k(out_ptr, in_ptr, N, K, TILE_N: tl.constexpr, TILE_K: tl.constexpr):
            cols = tl.arange(0, TILE_K)
        """) + textwrap.indent(textwrap.dedent(body), "    "))
    return kernel_of(str(path), "k")


def test_held_mask_read_after_the_loop_is_kept(tmp_path):
    """A mask name read after the loop would see the cut value: nothing is cut."""
    k = source_kernel(tmp_path, """\
        for r in range(0, N, TILE_N):
            rows = r + tl.arange(0, TILE_N)
            mask = (rows[:, None] < N) & (cols < K)
            x = tl.load(in_ptr + rows[:, None] * K + cols, mask=mask)
        tl.store(out_ptr + cols, tl.sum(mask.to(tl.int32), 0))
        """)
    assert k["loop_tails"] == []


def test_held_mask_wider_than_the_pointer_is_kept(tmp_path):
    """A mask that widens the loaded tile (a pointer along the columns alone): without the
    rows' term the load would give a tile of another shape."""
    k = source_kernel(tmp_path, """\
        for r in range(0, N, TILE_N):
            rows = r + tl.arange(0, TILE_N)
            mask = (rows[:, None] < N) & (cols < K)
            x = tl.load(in_ptr + cols, mask=mask)
            tl.store(out_ptr + rows[:, None] * K + cols, x, mask=mask)
        """)
    assert k["loop_tails"] == []


def test_scale_a_product_after_the_dot():
    """`b_s = tl.dot(b_q, b_k) * scale * RCP_LN2`: S is `scale * RCP_LN2` (a parameter and a
    positive constexpr local), the cut takes both factors."""
    path = os.path.join(COVERAGE, "attention_rcp.py")
    k = kernel_of(path, "attention_rcp_kernel")
    (fold,) = k["scale_folds"]
    assert (fold["x"], fold["scale"], fold["params"]) == ("b_s", "scale * RCP_LN2", ["scale"])
    data = open(path, "rb").read()
    assert data[fold["cut"]["start"]:fold["cut"]["end"]] == b" * scale * RCP_LN2"


def test_mask_a_name_indexed():
    """`mask=m_k[None, :]` with `m_k = o_k < T` set in the loop: the whole mask is the bound,
    cut with its `other` from both loads."""
    path = os.path.join(COVERAGE, "attention_rcp.py")
    (tail,) = kernel_of(path, "attention_rcp_kernel")["loop_tails"]
    assert (tail["var"], tail["size"], tail["block"]) == ("i_s", "T", "BS")
    texts = [" ".join(t.split()) for t in cut_texts(path, tail)]
    assert texts == [", mask=m_k[None, :]", ", other=0.0", ", mask=m_k[:, None]", ", other=0.0"]


def test_scale_chain_with_the_dot_not_first_is_kept(tmp_path):
    """`scale * tl.dot(q, k) * c`: the dot is not the chain's first factor, nothing is cut."""
    k = source_kernel(tmp_path, """\
        acc = tl.zeros([TILE_N], dtype=tl.float32)
        for r in range(0, N, TILE_N):
            q = tl.load(in_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
            s = N * tl.dot(q, q) * 2.0
            acc += tl.max(s, 1)
        tl.store(out_ptr + tl.arange(0, TILE_N), acc)
        """)
    assert k["scale_folds"] == []


def test_masks_joined_by_and_in_their_place():
    """`inside = rows[:, None] < M and cols[None, :] < N`, passed as the load's and the store's
    mask in its place: the columns' bound is cut from the assignment, `and` with it."""
    path = os.path.join(COVERAGE, "log_softmax_rows.py")
    tails = kernel_of(path, "log_softmax_rows_kernel")["loop_tails"]
    assert [t["var"] for t in tails] == ["start", "start"]
    assert [cut_texts(path, t) for t in tails] == [[" and cols[None, :] < N"]] * 2


def test_score_made_again_after_the_loop():
    """`qk` scaled in place in the loop and made afresh after it (`if remainder: qk =
    tl.dot(..)`): the block after the loop never reads the loop's score, the fold stays."""
    path = os.path.join(COVERAGE, "attention_tail.py")
    (fold,) = kernel_of(path, "attention_tail_kernel")["scale_folds"]
    assert (fold["x"], fold["scale"], fold["stmt"]["line"]) == ("qk", "sm_scale", 33)
    assert [m["line"] for m in fold["maxes"]] == [34] and [s["line"] for s in fold["subs"]] == [36]


def test_score_read_after_the_loop_is_kept(tmp_path):
    """A score the code after the loop reads as the loop left it (no fresh assignment first):
    folding would change what it reads, nothing is found."""
    k = source_kernel(tmp_path, """\
        m = tl.full([16], float("-inf"), dtype=tl.float32)
        q = tl.load(in_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
        for r in range(0, N, TILE_N):
            s = tl.dot(q, q)
            s *= K
            m = tl.maximum(m, tl.max(s, 1))
            p = tl.exp(s - m[:, None])
        if N > 0:
            tl.store(out_ptr + tl.arange(0, 16), tl.sum(s, 1))
        """)
    assert k["scale_folds"] == []
