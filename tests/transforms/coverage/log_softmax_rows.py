"""Log-softmax over the columns of each row of an [M, N] matrix, a tile of rows at a time, in
the operator libraries' older spelling: masks joined by Python's `and` (Triton's elementwise
and) and passed in their place, `tl.load(ptrs, mask, other=..)`, `tl.store(ptrs, y, mask)`. A
coverage fixture: masksplit must find the bound of the columns in both loops."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def log_softmax_rows_kernel(out_ptr, in_ptr, M, N, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    run_max = tl.full([BLOCK_M, BLOCK_N], float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        inside = rows[:, None] < M and cols[None, :] < N
        x = tl.load(in_ptr + rows[:, None] * N + cols[None, :], inside, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        empty = new_max == float("-inf")
        run_sum = tl.where(empty, run_sum,
                           run_sum * tl.exp(run_max - new_max) + tl.exp(x - new_max))
        run_max = new_max
    row_max = tl.max(run_max, 1)
    row_log_sum = tl.log(tl.sum(run_sum * tl.exp(run_max - row_max[:, None]), 1))
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        inside = rows[:, None] < M and cols[None, :] < N
        x = tl.load(in_ptr + rows[:, None] * N + cols[None, :], inside, other=0.0)
        y = x - row_max[:, None] - row_log_sum[:, None]
        tl.store(out_ptr + rows[:, None] * N + cols[None, :], y, inside)


def log_softmax_rows(x, block_m=8, block_n=32):
    m, n = x.shape
    out = torch.empty_like(x)
    log_softmax_rows_kernel[(triton.cdiv(m, block_m),)](out, x, m, n, BLOCK_M=block_m,
                                                        BLOCK_N=block_n)
    return out
