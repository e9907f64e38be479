"""The gemm record on FlagGems' general mm and bmm spellings (issue 36, item 4, take two): the
last K block peeled after a loop that stops short of K, tiles cast by rebinding before the dot,
masks chosen under constexpr flags, loads with a mask and no `other`, K offsets advanced in
place. The fixtures under tests/transforms/descriptors/ are found; each near miss, the fixture
with one line changed so that the rewrite would load another tile or another bound, is not."""

import os

from tforge_worker.analyze import analyze

DESCRIPTORS = os.path.join(os.path.dirname(__file__), "..", "transforms", "descriptors")


def gemm_of(tmp_path, fixture, kernel, *edits):
    """The gemm record of the fixture's kernel, after replacing each (old, new) once."""
    text = open(os.path.join(DESCRIPTORS, fixture)).read()
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new, 1)
    path = tmp_path / fixture
    path.write_text(text)
    return {k["name"]: k for k in analyze(str(path))["kernels"]}[kernel]["gemm"]


def peeled(tmp_path, *edits):
    return gemm_of(tmp_path, "gemm_peeled.py", "peeled_kernel", *edits)


def flags(tmp_path, *edits):
    return gemm_of(tmp_path, "gemm_flags.py", "flags_kernel", *edits)


def test_the_peeled_gemm(tmp_path):
    """K is the peeled block's bound (the loop stops at `last`); the loop's loads are unmasked;
    the second dot and the cast rebind the accumulator after the loop (split-K refuses)."""
    g = peeled(tmp_path)
    assert (g["m"], g["n"], g["k"], g["k_stop"], g["k_offset"]) == ("M", "N", "K", "last", "kk")
    assert (g["a"]["mask"], g["b"]["mask"], g["a"]["advance"]) == (None, None, None)
    assert g["stores_acc"] is False and g["c"]["base"] == "out" and g["k_advanced"] is False


def test_peels_that_prove_nothing(tmp_path):
    """The peeled block starting elsewhere than the loop's stop, bounded by another size for B
    than for A, or not at all, gives no K; a dot before the loop or in a second loop is not a peel; a rebinding
    of a loaded tile that is not a cast (it would not keep a zero zero) is refused."""
    assert peeled(tmp_path, ("    ok = last + tl.arange", "    ok = last + TK + tl.arange")) is None
    assert peeled(tmp_path, ("    ok = last + tl.arange", "    last += TK\n    ok = last + tl.arange")) \
        is None
    assert peeled(tmp_path, ("mask=in_k[:, None]", "mask=(ok < N)[:, None]")) is None
    assert peeled(tmp_path, ("mask=in_k[None, :],\n                 other=0.0", "")) is None
    assert peeled(tmp_path, ("    total = tl.zeros((TM, TN), dtype=tl.float32)\n",
                             "    total = tl.zeros((TM, TN), dtype=tl.float32)\n"
                             "    spare = tl.dot(tl.zeros((TM, TK), dtype=tl.float16), "
                             "tl.zeros((TK, TN), dtype=tl.float16))\n")) is None
    assert peeled(tmp_path, ("            xt = xt.to(out.dtype.element_ty)",
                             "            xt = xt * 2")) is None


def test_the_flags_gemm(tmp_path):
    """Masks named under if / else and conditional expressions, no `other`, offsets along K
    advanced in place, the block count through a name, bases moved along the batch."""
    g = flags(tmp_path)
    assert (g["k"], g["k_stop"], g["k_offset"]) == ("K", "steps", "_ * TK")
    assert (g["a"]["mask"], g["a"]["other"], g["c"]["mask"]) == ("x_mask", None, "out_mask")
    assert [g[x]["batch"]["stride"] for x in "abc"] == [["M", "K"], ["K", "N"], ["M", "N"]]
    assert g["stores_acc"] is True and g["tile_body"] is None
    assert g["k_advanced"] is True  # split-K, moving the tiles alone, must refuse it


def test_flags_that_prove_nothing(tmp_path):
    """K offsets advanced before the loads (the bound would be the next block's), their bound
    made before the loop (the first block's), advanced by another step, a mask branch that is
    not a bound, or a load filling masked lanes with 1: each unfound."""
    advance_first = ("        xt = tl.load(x_tile, x_mask)\n        wt = tl.load(w_tile, w_mask)\n"
                     "        ok += TK\n",
                     "        ok += TK\n        xt = tl.load(x_tile, x_mask)\n"
                     "        wt = tl.load(w_tile, w_mask)\n")
    assert flags(tmp_path, advance_first) is None
    assert flags(tmp_path, ("    steps = tl.cdiv(K, TK)\n",
                            "    steps = tl.cdiv(K, TK)\n    in_k = ok < K\n"),
                 ("            in_k = ok < K\n", "")) is None
    assert flags(tmp_path, ("        ok += TK\n", "        ok += 2 * TK\n")) is None
    assert flags(tmp_path, ("x_mask = in_k[None, :]", "x_mask = in_k[None, :] | True")) is None
    assert flags(tmp_path, ("tl.load(x_tile, x_mask)", "tl.load(x_tile, x_mask, 1.0)")) is None
