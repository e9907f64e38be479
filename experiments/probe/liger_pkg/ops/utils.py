import functools

import torch
import triton


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        def maybe_to_contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x
        args = [maybe_to_contiguous(arg) for arg in args]
        kwargs = {k: maybe_to_contiguous(v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)
    return wrapper


def infer_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def is_hip() -> bool:
    return torch.version.hip is not None


def element_mul_kernel_grid(n_rows):
    return (n_rows,)
