"""Direct 2-D convolution, stride 1, no padding: out[n, k, p, q] =
sum over c, r, s of x[n, c, p + r, q + s] * w[k, c, r, s], fp16 NCHW tensors, fp32 accumulation.

Each program computes a BLOCK_PQ x BLOCK_K tile (output positions x output channels) and walks
the input channels in BLOCK_C slices, for every filter tap (r, s).
"""

import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, out_ptr, N, C, H, W, K, P, Q,
                  R: tl.constexpr, S: tl.constexpr, BLOCK_PQ: tl.constexpr,
                  BLOCK_K: tl.constexpr, BLOCK_C: tl.constexpr):
    offs_npq = tl.program_id(0) * BLOCK_PQ + tl.arange(0, BLOCK_PQ)
    offs_k = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    n = offs_npq // (P * Q)
    pq = offs_npq % (P * Q)
    p = pq // Q
    q = pq % Q
    row_ok = offs_npq < N * P * Q
    acc = tl.zeros((BLOCK_PQ, BLOCK_K), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        cs = c0 + tl.arange(0, BLOCK_C)
        for r in tl.static_range(R):
            for s in tl.static_range(S):
                x_off = n[:, None] * (C * H * W) + cs[None, :] * (H * W) \
                    + (p[:, None] + r) * W + (q[:, None] + s)
                xv = tl.load(x_ptr + x_off, mask=row_ok[:, None] & (cs[None, :] < C), other=0.0)
                w_off = offs_k[None, :] * (C * R * S) + cs[:, None] * (R * S) + r * S + s
                wv = tl.load(w_ptr + w_off, mask=(cs[:, None] < C) & (offs_k[None, :] < K),
                             other=0.0)
                acc = tl.dot(xv, wv, acc)
    out_off = n[:, None] * (K * P * Q) + offs_k[None, :] * (P * Q) + pq[:, None]
    tl.store(out_ptr + out_off, acc.to(tl.float16), mask=row_ok[:, None] & (offs_k[None, :] < K))
