"""A user's script: launches the example matmul kernel itself (the file has no wrapper) at the
hand-written task's first tuning shape with its baseline config."""
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels", "matmul"))
import kernel  # noqa: E402

device = "cuda" if torch.cuda.is_available() else "cpu"
M = N = K = 4096 if device == "cuda" else 64
a = torch.randn(M, K, device=device, dtype=torch.float16)
b = torch.randn(K, N, device=device, dtype=torch.float16)
c = torch.empty(M, N, device=device, dtype=torch.float16)
grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
kernel.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                           GROUP_M=1, num_warps=4, num_stages=1)
assert torch.allclose(c.float(), a.float() @ b.float(), atol=1e-1, rtol=1e-2)
