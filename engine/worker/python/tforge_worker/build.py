"""Compile-only: build a config's kernel(s) without running them; report the compiler's numbers.

The kernel is launched the usual way (grid, the file's own function, or a wrapper), but every
@triton.jit function is intercepted at launch: its arguments are specialised exactly as Triton's launcher
would, and the kernel is compiled for the target instead of run. Without a GPU the target is
`cuda:90` (Triton ships ptxas, so PTX and cubin need no GPU); registers and spills then come from
ptxas's own report. With a GPU, loading the binary also checks it against the device's limits.
"""

import contextlib
import io
import os
import re
import subprocess
import tempfile
import time as _time

import torch
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction, create_function_from_signature

from . import variants
from .task import TaskError
from .kernels import hooked_runs
from .worker import (_make_tensor, _size, classify, get, laid_out, launch, make_inputs,
                     taking_variant)

# Shared memory a block may use (opt-in maximum), by compute capability: checked when no GPU is
# there to check it, as Triton's loader would.
_MAX_SHARED = {80: 166912, 86: 101376, 89: 101376, 90: 232448}
_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                           r"(\d+) bytes spill loads")


def _target(name):
    if name is None:
        if torch.cuda.is_available():
            return triton.runtime.driver.active.get_current_target()
        name = "cuda:90"
    backend, arch = name.split(":")
    return GPUTarget(backend, int(arch), 32)


_DIAGNOSTIC = re.compile(r"(?:error: (.*)|(Assertion .* failed)|(LLVM ERROR: .*)|"
                         r"Pipeline failed while executing \[`(\w+)`)")


@contextlib.contextmanager
def _native_stderr(text):
    """Collects what native code (MLIR, LLVM) writes to file descriptor 2 while it holds into
    `text` (a list), instead of the terminal of whoever started the worker: a failing pass prints
    the whole module there."""
    import sys
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+b") as f:
        os.dup2(f.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            f.seek(0)
            text.append(f.read().decode("utf-8", "replace"))


def _diagnostics(text):
    """The compiler's own reasons in what it printed: its error lines, a failed assertion, the
    pass that failed; "" when it printed none."""
    found = []
    for m in _DIAGNOSTIC.finditer(text):
        item = next(g for g in m.groups() if g)
        item = f"in {item}" if item == m.group(4) else item.strip()[:200]
        if item not in found and "Failures have been detected" not in item:
            found.append(item)
    return "; ".join(found[:3])


def _ptxas_report(kernel, log):
    """registers, spill stores/loads and stack from ptxas -v (run again if the kernel came from
    Triton's cache, which keeps no log)."""
    cached = not _PTXAS_REGS.search(log)
    if cached and "ptx" in kernel.asm:
        from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability
        arch = kernel.metadata.target.arch
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
            f.write(kernel.asm["ptx"])
            f.flush()
            cmd = [get_ptxas(arch).path, "-v", f"--gpu-name={sm_arch_from_capability(arch)}",
                   f.name, "-o", "/dev/null"]
            log = subprocess.run(cmd, capture_output=True, text=True).stderr
    regs = _PTXAS_REGS.search(log)
    spills = _PTXAS_SPILLS.search(log)
    return {"registers": int(regs.group(1)) if regs else None,
            "stack_bytes": int(spills.group(1)) if spills else None,
            "spill_stores": int(spills.group(2)) if spills else None,
            "spill_loads": int(spills.group(3)) if spills else None,
            "cached": cached}


def _compile_one(fn, target, args, kwargs):
    """What JITFunction.run does before launching: specialise, pack, compile."""
    backend = make_backend(target)
    kwargs = dict(kwargs)
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization,
                                                          options)
    log, native = io.StringIO(), []
    start = _time.perf_counter()
    try:
        with knobs.nvidia.scope(), contextlib.redirect_stdout(log), _native_stderr(native):
            knobs.nvidia.dump_ptxas_log = True
            kernel = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target,
                                    options=options.__dict__)
    except RuntimeError as e:
        reasons = _diagnostics(native[0]) if native else ""
        if reasons:
            raise RuntimeError(f"{e}: {reasons}") from e
        raise
    seconds = _time.perf_counter() - start
    md = kernel.metadata
    info = {"kernel": fn.__name__, "target": f"{target.backend}:{target.arch}",
            "shared_bytes": md.shared, "num_warps": md.num_warps, "num_stages": md.num_stages,
            "compile_s": round(seconds, 4), **_ptxas_report(kernel, log.getvalue())}
    if torch.cuda.is_available():
        kernel._init_handles()  # raises OutOfResources past the device's limits
    elif md.shared > _MAX_SHARED.get(target.arch, md.shared):
        raise triton.runtime.errors.OutOfResources(md.shared, _MAX_SHARED[target.arch],
                                                   "shared memory")
    return info


def _compile_inputs(loaded, shape, dev):
    """Inputs with the right shapes and dtypes. Random floats are left empty (their values do not
    matter to the compiler, and drawing a large one costs seconds); every other tensor is made as
    for a check, since host code may route by its values (expert ids, sequence lengths) or a
    kernel may index by them, and garbage there fails a launch that the check would pass."""
    spec = loaded.spec
    if spec["inputs_fn"] is not None:
        return make_inputs(loaded, shape, 0, dev)
    made = {}
    for i, s in enumerate(spec["inputs"]):
        field = f"{spec['id']}: inputs[{i}]"
        if s["init"] in ("randn", "rand"):
            dims, back = laid_out(s, [_size(d, shape, f"{field}.shape[{j}]")
                                      for j, d in enumerate(s["shape"])])
            t = torch.empty(dims, dtype=getattr(torch, s["dtype"]), device=dev)
            t = t.permute(back) if back else t
            made[s["name"]] = t.requires_grad_() if s.get("requires_grad") else t
        else:
            gen = torch.Generator(device=dev).manual_seed(i)
            made[s["name"]] = _make_tensor(s, shape, gen, dev, field)
    return made


@taking_variant
def compile(task, config, shape, target=None, also=()):
    """Compile `config` for `shape` without running it. Returns {status: ok|compile|runtime,
    message, kernel, target, registers, spill_stores, spill_loads, stack_bytes, shared_bytes,
    num_warps, num_stages, compile_s, cached, kernels: [same, for every kernel launched]}.
    `target` is "cuda:<capability>" (default: the GPU's, else cuda:90). The shapes in `also`
    (the check shapes) are compiled too, into Triton's cache only: their sizes specialise the
    kernel differently, and whoever runs the checks then finds them compiled."""
    loaded = get(task)
    if not isinstance(loaded.base, JITFunction):
        # Under TRITON_INTERPRET even triton.language's own @jit helpers (tl.max, tl.sum...)
        # are interpreted functions, so no kernel of this process can be compiled.
        return {"status": "unsupported", "fatal": False,
                "message": "compile-only needs a process without TRITON_INTERPRET"}
    tgt = _target(target)
    built = []

    def compiling(cls, original):
        def run(fn, *args, grid, warmup, **kwargs):
            # a variant's own launch may change the arguments (split-K's fp32 sums for C)
            target = variants.swap(fn)
            variants.launch(target, lambda a, kw, g: built.append(_compile_one(target, tgt, a,
                                                                               kw)),
                            args, kwargs, grid)
        return run

    def one_config(cls, original):
        # Nothing is timed here: another autotuned kernel on the way (the task's own is pinned
        # to the candidate already) compiles its first config instead of benchmarking them all.
        def run(self, *args, **kwargs):
            saved, self.configs = self.configs, self.configs[:1]
            try:
                return original(self, *args, **kwargs)
            finally:
                self.configs = saved
        return run

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    # Every jit function launched is compiled instead, whichever module it comes from (the
    # file's own function may launch helpers of other files).
    try:
        with hooked_runs(compiling, (JITFunction,)), hooked_runs(one_config, (Autotuner,)):
            for s in [*also, shape]:  # the tuning shape last: its numbers are those reported
                del built[:]
                launch(loaded, _compile_inputs(loaded, s, dev), config, s)
    except TaskError:
        raise
    except Exception as e:
        return classify(e)
    if not built:
        return {"status": "runtime", "fatal": False,
                "message": f"no @triton.jit kernel of {loaded.spec['source']} was launched"}
    main = next((b for b in built if b["kernel"] == loaded.base.__name__), built[0])
    return {"status": "ok", "message": "", "fatal": False, **main, "kernels": built}
