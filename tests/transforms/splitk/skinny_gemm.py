"""A skinny GEMM written the way library files are: an autotuned kernel with a config list,
and a wrapper that allocates C and returns it. C (M x N) = A (M x K) @ B (K x N) with few tiles
and a long K: the shape split-K is for."""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, num_warps=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def skinny_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] < K - kb * BLOCK_K), other=0.0)
        b = tl.load(b_tile, mask=(rk[:, None] < K - kb * BLOCK_K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    c_tile = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def skinny_matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    skinny_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c


def reference(inputs):
    return (inputs["a"].float() @ inputs["b"].float()).half()
