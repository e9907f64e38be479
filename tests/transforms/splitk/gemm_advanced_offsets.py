"""A GEMM whose loads are bounded along K by offsets the loop advances in place (`ok += BK`)
rather than by the loop variable: a split moving the tiles along K would leave those bounds on
the unsplit blocks (splitk's not_applicable; descriptors applies)."""
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(a, b, c, M, N, K, s_am, s_bk, s_cm, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    om = pid // tiles_n * BM + tl.arange(0, BM)
    on = pid % tiles_n * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a_tile = a + om[:, None] * s_am + ok[None, :]
    b_tile = b + ok[:, None] * s_bk + on[None, :]
    total = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        at = tl.load(a_tile, mask=(om[:, None] < M) & (ok[None, :] < K), other=0.0)
        bt = tl.load(b_tile, mask=(ok[:, None] < K) & (on[None, :] < N), other=0.0)
        total += tl.dot(at, bt)
        ok += BK
        a_tile += BK
        b_tile += BK * s_bk
    tl.store(c + om[:, None] * s_cm + on[None, :], total,
             mask=(om[:, None] < M) & (on[None, :] < N))
