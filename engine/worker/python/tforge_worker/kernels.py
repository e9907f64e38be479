"""A kernel object's layers, and every jit launch hooked: what `worker` (tasks) and `variants`
(rewritten source) both need, so that neither imports the other for it."""

import contextlib
import os

import triton
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import KernelInterface

JIT_CLASSES = (triton.runtime.JITFunction, InterpretedFunction)  # their run launches a kernel


def layers(kernel):
    """The wrappers of a kernel from the outermost in, the @triton.jit function last:
    @triton.autotune, @triton.heuristics, and any other triton.KernelInterface that keeps what
    it wraps in `.fn` (a library's launch cache such as FlagGems' @libentry())."""
    out = [kernel]
    while not isinstance(kernel, JIT_CLASSES) and isinstance(kernel, KernelInterface) and \
            isinstance(getattr(kernel, "fn", None), KernelInterface) and len(out) < 64:
        kernel = kernel.fn
        out.append(kernel)
    return out


def unwrap(kernel):
    """The @triton.jit function under its wrappers (`layers`)."""
    return layers(kernel)[-1]


def code_file(kernel):
    """The real path of the file defining the kernel (one file however its path was spelt when
    it was imported), or None."""
    fn = getattr(unwrap(kernel), "fn", None)
    path = getattr(getattr(fn, "__code__", None), "co_filename", None)
    return os.path.realpath(path) if path else None


def is_task_kernel(loaded, obj):
    """Whether `obj` (a jit function or a wrapper of one) is the kernel of the loaded task
    `loaded` (its `kernel` and `base`): its name and file, so that another import of the same
    module counts too."""
    return getattr(unwrap(obj), "__name__", None) == loaded.base.__name__ and \
        code_file(obj) == code_file(loaded.kernel)


@contextlib.contextmanager
def hooked_runs(make, classes=None):
    """Within it, `cls.run` of each class (default: compiled and interpreted jit functions) is
    make(cls, original): every launch of every kernel, whichever module holds it, goes through
    it. Put back on exit."""
    saved = [(cls, cls.__dict__["run"]) for cls in classes or JIT_CLASSES]
    for cls, original in saved:
        cls.run = make(cls, original)
    try:
        yield
    finally:
        for cls, original in saved:
            cls.run = original
