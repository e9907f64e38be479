"""A batched GEMM written as flash-linear-attention's matmul and FlagGems' bmm are: a program id
along a batch axis (axis 0, taken as int64) moves A's and C's bases through names of their own
(`a_batch = a + i_b * stride_ab`) and B's base in place (`b += i_b * K * N`, B contiguous), the
tile ids are swizzled, A's rows wrap (`% M`) so that only K is masked, and an activation chosen
by a constexpr runs before C's store (the descriptors rewrite's coverage fixture:
`gemm_batched.json`)."""
import torch
import triton
import triton.language as tl


@triton.jit
def batched_kernel(a, b, c, M, N, K, stride_ab, stride_am, stride_ak, stride_cb, stride_cm,
                   stride_cn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   G: tl.constexpr, ACTIVATION: tl.constexpr):
    i_b, i_m, i_n = tl.program_id(0).to(tl.int64), tl.program_id(1), tl.program_id(2)
    NM, NN = tl.num_programs(1), tl.num_programs(2)
    i_m, i_n = tl.swizzle2d(i_m, i_n, NM, NN, G)

    a_batch = a + i_b * stride_ab
    b += i_b * K * N
    o_am = (i_m * BM + tl.arange(0, BM)) % M
    o_bn = i_n * BN + tl.arange(0, BN)
    o_k = tl.arange(0, BK)
    p_a = a_batch + (o_am[:, None] * stride_am + o_k[None, :] * stride_ak)
    p_b = b + o_k[:, None] * N + o_bn[None, :]

    b_acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        b_a = tl.load(p_a, mask=o_k[None, :] < K - k * BK, other=0.0)
        b_b = tl.load(p_b, mask=(o_k[:, None] < K - k * BK) & (o_bn[None, :] < N), other=0.0)
        b_acc = tl.dot(b_a, b_b, acc=b_acc)
        p_a += BK * stride_ak
        p_b += BK * N

    o_cm = i_m * BM + tl.arange(0, BM)
    o_cn = i_n * BN + tl.arange(0, BN)
    mask = (o_cm[:, None] < M) & (o_cn[None, :] < N)
    b_c = b_acc
    if ACTIVATION == "relu":
        b_c = tl.maximum(b_c, 0.0)
    c_batch = c + i_b * stride_cb
    p_c = c_batch + stride_cm * o_cm[:, None] + stride_cn * o_cn[None, :]
    tl.store(p_c, b_c.to(c.dtype.element_ty), mask=mask)


def bmm(a, b, activation="relu"):
    B, M, K = a.shape
    N = b.shape[2]
    b = b.contiguous()
    c = torch.empty((B, M, N), device=a.device, dtype=a.dtype)
    grid = (B, triton.cdiv(M, 16), triton.cdiv(N, 16))
    batched_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), a.stride(2), c.stride(0),
                         c.stride(1), c.stride(2), BM=16, BN=16, BK=16, G=2,
                         ACTIVATION=activation)
    return c


def bmm_padded(a, b):
    """bmm with A's batches one element apart more than its rows need: a batch stride of
    M * K + 1 elements, which TMA cannot address past the first batch."""
    B, M, K = a.shape
    padded = torch.empty(B * (M * K + 1), device=a.device, dtype=a.dtype)
    strided = padded.as_strided(a.shape, (M * K + 1, K, 1))
    strided.copy_(a)
    return bmm(strided, b)
