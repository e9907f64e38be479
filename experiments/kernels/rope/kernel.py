"""Rotary position embedding, applied in place to x of shape (B, S, H, D), fp16, in the
rotate-half layout: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin) for the two halves of the
head dimension. cos and sin are (S, D/2) fp32 tables of the positions' angles.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, S, H, HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    row = tl.program_id(0)  # one (batch, position) pair
    pos = row % S
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, HALF)
    cos = tl.load(cos_ptr + pos * HALF + d)[None, :]
    sin = tl.load(sin_ptr + pos * HALF + d)[None, :]
    base = x_ptr + row * H * 2 * HALF + heads[:, None] * (2 * HALF) + d[None, :]
    mask = heads[:, None] < H
    x1 = tl.load(base, mask=mask).to(tl.float32)
    x2 = tl.load(base + HALF, mask=mask).to(tl.float32)
    tl.store(base, (x1 * cos - x2 * sin).to(tl.float16), mask=mask)
    tl.store(base + HALF, (x2 * cos + x1 * sin).to(tl.float16), mask=mask)


def make_inputs(shape, gen):
    """Random x; cos/sin of the usual angles pos / 10000^(2i/D) (not random)."""
    B, S, H, D = shape["B"], shape["S"], shape["H"], shape["D"]
    x = torch.randn(B, S, H, D, generator=gen).half()
    inv_freq = 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    angles = torch.arange(S, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return {"x": x, "cos": angles.cos().float(), "sin": angles.sin().float()}


def reference(inputs):
    x = inputs["x"].float()
    half = x.shape[-1] // 2
    cos = inputs["cos"][None, :, None, :]
    sin = inputs["sin"][None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).half()
