"""Row-wise softmax of an M x N fp32 matrix, one program per row.

The row is read in BLOCK_N chunks twice: once for its running maximum and sum of exponentials
(online softmax), once more to write exp(x - max) / sum.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    in_row = in_ptr + row * in_stride
    out_row = out_ptr + row * out_stride
    row_max = -float("inf")
    row_sum = 0.0
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf"))
        new_max = tl.maximum(row_max, tl.max(x, axis=0))
        row_sum = row_sum * tl.exp(row_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        row_max = new_max
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out_row + cols, tl.exp(x - row_max) / row_sum, mask=cols < n_cols)


def softmax(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1], BLOCK_N=128,
                                  num_warps=4, num_stages=1)
    return out


def reference(inputs):
    return torch.softmax(inputs["x"].float(), dim=1)


# Demo left at top level, as often in kernel files: never run by the tuner, but run when the
# winner's file is imported (the take-home check), on a CPU in Triton's interpreter, which runs
# a program in about 0.05 s: a few rows, not thousands (4096-row benchmarks took 19 minutes).
torch.manual_seed(0)
x = torch.randn(37, 781, device="cuda")
assert torch.allclose(softmax(x), torch.softmax(x, dim=1), atol=1e-6)
for n in [256, 1024, 4096]:
    ms = triton.testing.do_bench(lambda: softmax(torch.randn(16, n, device="cuda")))
    print(n, ms)
