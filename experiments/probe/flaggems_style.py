"""FlagGems-style ops: a @libentry() decorator over @triton.autotune whose configs come from
runtime.get_tuned_config(op), @triton.heuristics on top, and a pointwise op through a small
code-generating decorator stand-in."""
import os
import torch
import triton
import triton.language as tl


class _Runtime:
    _table = {
        "softmax_inner": [
            dict(TILE_N=32, ONE_TILE_PER_CTA=False),
            dict(TILE_N=64, ONE_TILE_PER_CTA=False),
        ],
        "mv": [dict(BLOCK_N=16, BLOCK_M=32), dict(BLOCK_N=32, BLOCK_M=64)],
    }

    def get_tuned_config(self, op_name):
        configs = self._table[op_name]
        # Triton's autotuner benchmarks through a GPU driver: one config under the interpreter,
        # unless PROBE_MULTI=1 (to show what a file that does not cut them does).
        if os.environ.get("TRITON_INTERPRET") == "1" and os.environ.get("PROBE_MULTI") != "1":
            configs = configs[:1]
        return [triton.Config({k: v for k, v in c.items()}, num_warps=4, num_stages=2)
                for c in configs]

    def get_heuristic_config(self, op_name):
        return {"TILE_M": lambda args: 1}


runtime = _Runtime()


class LibEntry(triton.KernelInterface):
    """Caches the kernel per signature (stand-in for FlagGems' libentry)."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.kernel_cache = {}
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, **kwargs):
        return self.fn.run(*args, **kwargs)


def libentry():
    def decorator(fn):
        return LibEntry(fn)
    return decorator


@libentry()
@triton.autotune(configs=runtime.get_tuned_config("softmax_inner"), key=["M", "N"])
@triton.heuristics(runtime.get_heuristic_config("softmax_inner"))
@triton.jit
def softmax_kernel_inner(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr, ONE_TILE_PER_CTA: tl.constexpr,
                         TILE_M: tl.constexpr):
    pid_m = tl.program_id(0)
    m = pid_m
    input_ptr += m * N
    output_ptr += m * N
    m_val = tl.full([TILE_N], value=float("-inf"), dtype=tl.float32)
    z = tl.full([TILE_N], value=0.0, dtype=tl.float32)
    for start_n in range(0, N, TILE_N):
        n_offsets = start_n + tl.arange(0, TILE_N)
        mask = n_offsets < N
        inp = tl.load(input_ptr + n_offsets, mask=mask, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_val, inp)
        all_neg_inf = m_new == float("-inf")
        z = tl.where(all_neg_inf, z, z * tl.exp(m_val - m_new) + tl.exp(inp - m_new))
        m_val = m_new
    m_reduced = tl.max(m_val, 0)
    z = tl.sum(z * tl.exp(m_val - m_reduced), 0)
    for start_n in range(0, N, TILE_N):
        n_offsets = start_n + tl.arange(0, TILE_N)
        mask = n_offsets < N
        inp = tl.load(input_ptr + n_offsets, mask=mask, other=-float("inf")).to(tl.float32)
        o = tl.exp(inp - m_reduced) / z
        tl.store(output_ptr + n_offsets, o.to(output_ptr.dtype.element_ty), mask=mask)


def softmax(self, dim, half_to_float=False):
    assert dim == -1 or dim == self.ndim - 1
    dtype = self.dtype
    inp = self.contiguous()
    N = inp.shape[-1]
    M = inp.numel() // N
    out = torch.empty_like(inp, dtype=dtype)
    grid = (M, 1, 1)
    with torch.device(inp.device):
        softmax_kernel_inner[grid](out, inp, M, N)
    return out


@libentry()
@triton.autotune(configs=runtime.get_tuned_config("mv"), key=["M", "N"])
@triton.jit
def mv_kernel(A, B, C, N, M, stride_an, stride_am, stride_bm, stride_cn,
              BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offset_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)[:, None]
    offset_m = tl.arange(0, BLOCK_M)[None, :]
    n_mask = offset_n < N
    A_ptrs = A + offset_n * stride_an + offset_m * stride_am
    B_ptrs = B + offset_m * stride_bm
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for m in range(0, M, BLOCK_M):
        m_mask = m + offset_m < M
        a = tl.load(A_ptrs, mask=n_mask & m_mask, other=0.0).to(tl.float32)
        b = tl.load(B_ptrs, mask=m_mask, other=0.0).to(tl.float32)
        acc += a * b
        A_ptrs += BLOCK_M * stride_am
        B_ptrs += BLOCK_M * stride_bm
    acc = tl.sum(acc, axis=1)
    C_ptrs = C + offset_n * stride_cn
    tl.store(C_ptrs, acc[:, None].to(C.dtype.element_ty), mask=n_mask)


def mv(inp, vec):
    assert inp.shape[1] == vec.shape[0]
    N, M = inp.shape
    out = torch.empty((N,), device=inp.device, dtype=inp.dtype)
    grid = lambda META: (triton.cdiv(N, META["BLOCK_N"]),)
    with torch.device(inp.device):
        mv_kernel[grid](inp, vec, out, N, M, inp.stride(0), inp.stride(1), vec.stride(0), out.stride(0))
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6, 100)
    torch.testing.assert_close(softmax(x, -1), torch.softmax(x, -1), atol=1e-5, rtol=1e-5)
    a = torch.randn(70, 50)
    v = torch.randn(50)
    torch.testing.assert_close(mv(a, v), a @ v, atol=1e-4, rtol=1e-4)
    print("ok")
