"""Decode-style attention of one query block over a key sequence in the serving libraries'
shape: whole key blocks in the loop, scaled in place (`qk *= sm_scale`) after the dot, tl.exp,
and the partial last block computed again after the loop under `if remainder:`, which makes its
own score. A coverage fixture: scalefold must see that the block after the loop never reads the
loop's score."""
import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def attention_tail_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, L, M: tl.constexpr,
                          D: tl.constexpr, BLOCK_N: tl.constexpr):
    bh = tl.program_id(0)
    rows = tl.arange(0, M)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + bh * M * D + rows[:, None] * D + dims[None, :])
    e_max = tl.full([M], float("-inf"), dtype=tl.float32)
    e_sum = tl.zeros([M], dtype=tl.float32)
    acc = tl.zeros([M, D], dtype=tl.float32)
    keys = tl.arange(0, BLOCK_N)
    whole = L // BLOCK_N
    remainder = L % BLOCK_N
    for i in range(0, whole):
        kv = bh * L * D + (i * BLOCK_N + keys)[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv)
        v = tl.load(v_ptr + kv)
        qk = tl.dot(q, tl.trans(k))
        qk *= sm_scale
        n_max = tl.maximum(tl.max(qk, 1), e_max)
        re_scale = tl.exp(e_max - n_max)
        p = tl.exp(qk - n_max[:, None])
        acc = acc * re_scale[:, None] + tl.dot(p.to(v.dtype), v)
        e_sum = e_sum * re_scale + tl.sum(p, 1)
        e_max = n_max
    if remainder:
        inside = whole * BLOCK_N + keys < L
        kv = bh * L * D + (whole * BLOCK_N + keys)[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv, mask=inside[:, None], other=0.0)
        v = tl.load(v_ptr + kv, mask=inside[:, None], other=0.0)
        qk = tl.dot(q, tl.trans(k))
        qk *= sm_scale
        qk = tl.where(inside[None, :], qk, float("-inf"))
        n_max = tl.maximum(tl.max(qk, 1), e_max)
        re_scale = tl.exp(e_max - n_max)
        p = tl.exp(qk - n_max[:, None])
        acc = acc * re_scale[:, None] + tl.dot(p.to(v.dtype), v)
        e_sum = e_sum * re_scale + tl.sum(p, 1)
    out = acc / e_sum[:, None]
    tl.store(o_ptr + bh * M * D + rows[:, None] * D + dims[None, :], out.to(o_ptr.dtype.element_ty))


def attention_tail(q, k, v, block_n=16):
    bh, m, d = q.shape
    o = torch.empty_like(q)
    attention_tail_kernel[(bh,)](q, k, v, o, 1.0 / math.sqrt(d), k.shape[1], M=m, D=d,
                                 BLOCK_N=block_n)
    return o
