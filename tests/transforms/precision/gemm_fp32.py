"""C = A @ B in fp32 (A: M x K, B: K x N, fp32 in and out), one program per tile on a 2-D grid,
the product of each K step added to the accumulator (`acc += tl.dot(a, b)`). Written the way
fp32 GEMMs in the wild are: the dot sets no input_precision, so on a GPU with tensor cores
Triton multiplies in tf32 (10-bit mantissas); tf32x3 and ieee are closer to fp32.
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def gemm_fp32_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k0 + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_fp32(a, b, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32):
    assert a.dtype == b.dtype == torch.float32 and a.shape[1] == b.shape[0]
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    gemm_fp32_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           c.stride(0), c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                           BLOCK_K=BLOCK_K)
    return c


def reference(inputs):
    """The product in fp64, rounded once to fp32: what an exact fp32 GEMM approaches."""
    return (inputs["a"].double() @ inputs["b"].double()).float()


if __name__ == "__main__":
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    torch.manual_seed(0)
    a = torch.randn(70, 300, device=device)
    b = torch.randn(300, 50, device=device)
    torch.testing.assert_close(matmul_fp32(a, b), reference({"a": a, "b": b}), atol=0.5,
                               rtol=1e-2)
    print("gemm_fp32 ok")
