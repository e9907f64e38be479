"""A GEMM written as FlagGems' general mm is: the K loop stops one block short (where a jit
helper says the last block starts) and loads without masks, the last block is peeled by hand
after the loop (a second dot, its loads masked along K through a name indexed `[None, :]`),
both loops' tiles are cast when A and B differ in type (`if a.dtype != b.dtype: a = a.to(..)`,
rebinding the loaded tiles before the dot), rows and columns wrap (`% M`) under value hints and
are made again for the store (the descriptors rewrite's coverage fixture: `gemm_peeled.json`,
A in half precision and B in single, so that the casts run)."""
import torch
import triton
import triton.language as tl


@triton.jit
def last_block_start(size, block):
    return tl.cdiv(size, block) * block - block


@triton.jit
def peeled_kernel(x, w, out, M, N, K, sxm, sxk, swk, swn, som, son, TM: tl.constexpr,
                  TN: tl.constexpr, TK: tl.constexpr):
    tiles_n = tl.cdiv(N, TN)
    tm = tl.program_id(0) // tiles_n
    tn = tl.program_id(0) % tiles_n
    om = tm * TM + tl.arange(0, TM)
    on = tn * TN + tl.arange(0, TN)
    om_wrapped = tl.multiple_of(om % M, TM)
    on_wrapped = tl.max_contiguous(on % N, TN)
    last = last_block_start(K, TK)

    total = tl.zeros((TM, TN), dtype=tl.float32)
    for kk in range(0, last, TK):
        ok = kk + tl.arange(0, TK)
        xt = tl.load(x + (om_wrapped[:, None] * sxm + ok[None, :] * sxk))
        wt = tl.load(w + (ok[:, None] * swk + on_wrapped[None, :] * swn))
        if xt.dtype != wt.dtype:
            xt = xt.to(out.dtype.element_ty)
            wt = wt.to(out.dtype.element_ty)
        total += tl.dot(xt, wt, out_dtype=tl.float32)

    ok = last + tl.arange(0, TK)
    in_k = ok < K
    xt = tl.load(x + (om_wrapped[:, None] * sxm + ok[None, :] * sxk), mask=in_k[None, :],
                 other=0.0)
    wt = tl.load(w + (ok[:, None] * swk + on_wrapped[None, :] * swn), mask=in_k[:, None],
                 other=0.0)
    if xt.dtype != wt.dtype:
        xt = xt.to(out.dtype.element_ty)
        wt = wt.to(out.dtype.element_ty)
    total += tl.dot(xt, wt, out_dtype=tl.float32)

    total = total.to(out.dtype.element_ty)
    om = tm * TM + tl.arange(0, TM)
    on = tn * TN + tl.arange(0, TN)
    out = out + (om[:, None] * som + on[None, :] * son)
    tl.store(out, total, mask=(om < M)[:, None] & (on < N)[None, :])


def mm(x, w):
    M, K = x.shape
    N = w.shape[1]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
    peeled_kernel[grid](x, w, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                        out.stride(0), out.stride(1), TM=16, TN=16, TK=16)
    return out
