"""Attention over [B, T, H, D] tensors in the style of linear-attention libraries: scores
`tl.dot(q, k) * scale * RCP_LN2` with log2(e) a constexpr local, keys beyond T masked by a
where of -inf, the running maximum updated through a tuple assignment, exp2. A coverage
fixture: scalefold must read the scale as the product after the dot."""
import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def attention_rcp_kernel(q, k, v, o, scale, T, H: tl.constexpr, D: tl.constexpr,
                         BT: tl.constexpr, BS: tl.constexpr):
    RCP_LN2: tl.constexpr = 1.4426950216
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    o_q = i_t * BT + tl.arange(0, BT)
    o_d = tl.arange(0, D)
    base = i_b * T * H * D + i_h * D
    m_q = o_q < T
    b_q = tl.load(q + base + o_q[:, None] * (H * D) + o_d[None, :], mask=m_q[:, None], other=0.0)
    b_o = tl.zeros([BT, D], dtype=tl.float32)
    b_m = tl.full([BT], float("-inf"), dtype=tl.float32)
    b_acc = tl.zeros([BT], dtype=tl.float32)
    for i_s in range(0, T, BS):
        o_k = i_s + tl.arange(0, BS)
        m_k = o_k < T
        b_k = tl.load(k + base + o_d[:, None] + o_k[None, :] * (H * D), mask=m_k[None, :],
                      other=0.0)
        b_v = tl.load(v + base + o_k[:, None] * (H * D) + o_d[None, :], mask=m_k[:, None],
                      other=0.0)
        b_s = tl.dot(b_q, b_k) * scale * RCP_LN2
        b_s = tl.where(m_k[None, :], b_s, float("-inf"))
        b_m, b_mp = tl.maximum(b_m, tl.max(b_s, 1)), b_m
        b_r = tl.math.exp2(b_mp - b_m)
        b_p = tl.math.exp2(b_s - b_m[:, None])
        b_acc = b_acc * b_r + tl.sum(b_p, 1)
        b_o = b_o * b_r[:, None] + tl.dot(b_p.to(b_q.dtype), b_v)
    b_o = b_o / b_acc[:, None]
    tl.store(o + base + o_q[:, None] * (H * D) + o_d[None, :], b_o.to(o.dtype.element_ty),
             mask=m_q[:, None])


def attention_rcp(q, k, v, bt=32, bs=16):
    b, t, h, d = q.shape
    o = torch.empty_like(q)
    attention_rcp_kernel[(triton.cdiv(t, bt), b * h)](q, k, v, o, 1.0 / math.sqrt(d), t, H=h,
                                                      D=d, BT=bt, BS=bs)
    return o
