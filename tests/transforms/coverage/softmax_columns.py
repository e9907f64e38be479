"""Softmax over the rows of each column of an [N, K] matrix, in the style of operator libraries:
the masks are held in names (`mask = (rows[:, None] < N) & (cols < K)`) and a tile of columns
runs an online max and sum down the rows, a loop over N in blocks of TILE_N. A coverage
fixture: masksplit must find the bound of the rows inside those names."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def softmax_columns_kernel(out_ptr, in_ptr, N, K, TILE_N: tl.constexpr, TILE_K: tl.constexpr):
    col_block = tl.program_id(0)
    cols = col_block * TILE_K + tl.arange(0, TILE_K)
    run_max = tl.full([TILE_N, TILE_K], float("-inf"), dtype=tl.float32)
    run_sum = tl.zeros([TILE_N, TILE_K], dtype=tl.float32)
    for row_start in range(0, N, TILE_N):
        rows = row_start + tl.arange(0, TILE_N)
        mask = (rows[:, None] < N) & (cols < K)
        x = tl.load(in_ptr + rows[:, None] * K + cols, mask=mask, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        empty = new_max == float("-inf")
        run_sum = tl.where(empty, run_sum,
                           run_sum * tl.exp(run_max - new_max) + tl.exp(x - new_max))
        run_max = new_max
    col_max = tl.max(run_max, 0)
    col_sum = tl.sum(run_sum * tl.exp(run_max - col_max[None, :]), 0)
    for row_start in range(0, N, TILE_N):
        rows = row_start + tl.arange(0, TILE_N)
        inside = (rows < N)[:, None] & (cols[None, :] < K)
        x = tl.load(in_ptr + rows[:, None] * K + cols[None, :], mask=inside, other=0.0)
        y = tl.exp(x - col_max[None, :]) / col_sum[None, :]
        tl.store(out_ptr + rows[:, None] * K + cols[None, :], y, mask=inside)


def softmax_columns(x, tile_n=16, tile_k=32):
    n, k = x.shape
    out = torch.empty_like(x)
    softmax_columns_kernel[(triton.cdiv(k, tile_k),)](out, x, n, k, TILE_N=tile_n,
                                                      TILE_K=tile_k)
    return out
