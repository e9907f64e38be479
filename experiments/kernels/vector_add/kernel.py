"""Vector addition: out = x + y, one block of BLOCK elements per program."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y, BLOCK=128):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, num_warps=4, num_stages=1)
    return out


def reference(inputs):
    return inputs["x"] + inputs["y"]


# A first-time author's check, run at import: the import filter must skip it.
x = torch.randn(98432, device="cuda")
y = torch.randn(98432, device="cuda")
print("max error", (add(x, y) - (x + y)).abs().max().item())
