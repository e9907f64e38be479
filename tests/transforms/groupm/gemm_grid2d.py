"""C = relu?(A @ B) for fp16 A (M x K), B (K x N), fp32 accumulation and output, autotuned, over a
2-D grid: program (i, j) computes tile row i, tile column j (`tl.program_id(0)`,
`tl.program_id(1)`), no GROUP_M swizzle. The wrapper allocates the output and returns it.
"""

import os

import torch
import triton
import triton.language as tl

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"

configs = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
    for bm, bn, bk, w, s in [(32, 32, 32, 4, 2), (64, 64, 32, 4, 3), (128, 128, 64, 8, 3),
                             (128, 256, 64, 8, 3)]
]
# The CPU interpreter cannot benchmark (it has no GPU driver): one config there.
if os.environ.get("TRITON_INTERPRET") == "1":
    configs = configs[:1]


@triton.autotune(configs=configs, key=["M", "N", "K"])
@triton.jit
def matmul_2d_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     RELU: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b, relu=False):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "incompatible dimensions"
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    matmul_2d_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           c.stride(0), c.stride(1), RELU=relu)
    return c


def reference(inputs):
    return torch.relu(inputs["a"].float() @ inputs["b"].float())


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn((200, 72), device=DEVICE, dtype=torch.float16)
    b = torch.randn((72, 96), device=DEVICE, dtype=torch.float16)
    torch.testing.assert_close(matmul(a, b, relu=True), reference({"a": a, "b": b}),
                               atol=1e-2, rtol=1e-3)
    print("matmul_2d ok")
