"""Source variants of a task's kernel file: what the engine's transforms composed.

A variant is the kernel file's text with span edits applied. It is loaded under the original
file's name and package (so that its imports resolve as the file's own do), and while
`active(loaded, text)` holds, every launch of the task's kernel, however it is reached (the
task's grid, the file's own function, a wrapper, the autotuner), runs the variant's kernel of the
same name instead. Everything else of the file (wrappers, references, helpers the caller imports)
stays the original's. A variant kernel with a `tforge_launch(run, args, kwargs, grid)` attribute
(set by a transform's decorator: split-K's) has each swapped launch made by it: it does what must
come before and after (zeroing a buffer, copying it into an output) and calls `run(args, kwargs,
grid)`, the launch itself, with the arguments and grid it chose.
"""

import contextlib
import difflib
import hashlib
import os

from . import loader
from .kernels import JIT_CLASSES, hooked_runs, is_task_kernel, unwrap


def unified_diff(path, text):
    """The unified diff from the file at `path` to `text`, "" when they are the same."""
    with open(path, encoding="utf-8") as f:
        old = f.read()
    name = os.path.basename(path)
    return "".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                        f"a/{name}", f"b/{name}"))


def _kernel_of(loaded, text, digest=None):
    """The variant's jit function of the task's kernel name, loaded once per variant: known by
    the engine's digest of its text (else by a hash of it here)."""
    cache = loaded.cache.setdefault("variants", {})
    if digest is None:
        digest = hashlib.sha1(text.encode()).hexdigest()
    if digest not in cache:
        path = loaded.analysis_path
        try:
            module, _ = loader.load(path, text=text)
        except loader.LoadError as e:
            raise VariantError(f"the variant does not load: {e}") from None
        kernel = getattr(module, loaded.base.__name__, None)
        if kernel is None:
            raise VariantError(f"the variant defines no '{loaded.base.__name__}'")
        if len(cache) >= 8:  # a search visits each variant a few times in a row: keep a few
            del cache[next(iter(cache))]
        cache[digest] = unwrap(kernel)
    return cache[digest]


_sources = {}  # digest -> text: the variants the engine sent, so that it sends each once


def source_of(text, digest):
    """The variant's text: as sent (then kept under its digest), or the one kept under the
    digest when the engine sent the digest only (it sends each variant's text once)."""
    if text is not None:
        if digest is not None:
            if len(_sources) >= 8 and digest not in _sources:  # the engine names the last only
                del _sources[next(iter(_sources))]
            _sources[digest] = text
        return text
    if digest not in _sources:
        raise VariantError(f"variant {digest}: its text was never sent to this worker")
    return _sources[digest]


class VariantError(Exception):
    """The variant itself is broken (it does not parse or load): a failed candidate."""


_active = []  # (loaded, variant kernel) while active() holds


def swap(fn):
    """The variant's kernel when `fn` is the task's kernel and a variant is active, else fn (for
    hooks that replace a launch instead of passing it on, such as compile-only)."""
    for loaded, variant in _active:
        if fn is not variant and is_task_kernel(loaded, fn):
            return variant
    return fn


def launch(fn, run, args, kwargs, grid):
    """`run(args, kwargs, grid)`, the launch of the variant kernel `fn`, through its
    `tforge_launch` when it has one."""
    adapt = getattr(fn, "tforge_launch", None)
    return run(args, kwargs, grid) if adapt is None else adapt(run, args, kwargs, grid)


@contextlib.contextmanager
def suspended():
    """The file's own kernels while it holds, even inside active() (a reference that is the
    baseline's own launch)."""
    saved = _active[:]
    del _active[:]
    try:
        yield
    finally:
        _active[:] = saved


@contextlib.contextmanager
def active(loaded, text, digest=None):
    """While it holds, launches of the task's kernel run the variant of `text` (None: the file
    as it is), known by `digest` when the engine gave it. A variant that does not load raises
    VariantError."""
    if text is None:
        yield
        return
    variant = _kernel_of(loaded, text, digest)

    def make(cls, original):
        def run(fn, *args, grid, warmup=False, **kwargs):
            target = swap(fn)
            if target is fn or warmup:
                return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
            return launch(target, lambda a, kw, g: original(target, *a, grid=g, warmup=False,
                                                            **kw), args, kwargs, grid)
        return run
    _active.append((loaded, variant))
    try:
        with hooked_runs(make, JIT_CLASSES):
            yield
    finally:
        _active.remove((loaded, variant))
