"""Profiling one config: what its launch is (grid, warps, the task's bytes and flops, the
device), and on the GPU the hardware counters of a profiler plugin (`_tforge_profiler`, the
worker's built-in module over the engine's plugins).

A model's proposal is profiled once more to learn that its kernel ran: `launches_of` names the
kernel, passed to the profiler as its option `kernel`, and the profiler counts that kernel's
launches (`kernel_launches`). That is asked even without a GPU, where only a profiler of the
tests answers it (the launches run in the interpreter).

The profiler is created once per worker process, lazily, for the options first asked; a refusal
(counters forbidden on this device) is remembered and answered again without asking CUPTI twice.
Each replay pass runs the candidate once, synchronised, with its inputs restored and the L2
flushed before the pass (as timing does), so every pass sees the same launch.
"""

import math

import torch

from . import bench
from .kernels import hooked_runs, is_task_kernel
from .task import TaskError, cost_at
from .worker import (DEFAULT_NUM_WARPS, _Stop, bind, classify, get, kernel_params, launch,
                     make_inputs, taking_variant)

_DEVICE_FIELDS = ("name", "major", "minor", "multi_processor_count", "regs_per_multiprocessor",
                  "shared_memory_per_multiprocessor", "shared_memory_per_block_optin",
                  "max_threads_per_multi_processor")
_held = {}  # "key": (profiler id, options), "state": "ok" | "refused" | "failed", "note"


def _launch_facts(loaded, inputs, config, shape):
    """grid_blocks (the product of the grid's dims, as evaluated) and num_warps of the task
    kernel's first launch with `config`, stopped before the kernel runs or compiles."""
    facts = {}
    params = kernel_params(loaded.kernel)
    names = [n for n, *_ in params]

    def make(cls, original):
        def run(fn, *args, grid, warmup, **kwargs):
            if not is_task_kernel(loaded, fn):
                return original(fn, *args, grid=grid, warmup=warmup, **kwargs)
            if callable(grid):
                bound = {n: d for n, _, has, d in params if has}
                bound.update(zip(names, args), **kwargs)
                grid = grid(bound)
            dims = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
            facts["grid_blocks"] = math.prod(int(d) for d in dims)
            facts["num_warps"] = int(kwargs.get("num_warps") or DEFAULT_NUM_WARPS)
            raise _Stop()
        return run
    try:
        with hooked_runs(make):
            launch(loaded, inputs, config, shape)
    except _Stop:
        pass
    return facts


def _device():
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {f: getattr(props, f) for f in _DEVICE_FIELDS if hasattr(props, f)}


def _profiler(profiler, options, gpu):
    """The worker's profiler for (id, options), created on first use: (state, note) where state
    is "ok", "refused" or "failed". Without a GPU its device is -1."""
    import _tforge_profiler
    key = (profiler, tuple(sorted(options.items())))
    if _held.get("key") != key:
        if gpu:
            torch.cuda.init()  # the plugin profiles torch's context: it must exist first
        code, message = _tforge_profiler.create(profiler,
                                                torch.cuda.current_device() if gpu else -1,
                                                dict(options))
        _held.update(key=key, note=message,
                     state="ok" if code == 0 else "refused" if code == 2 else "failed")
    return _held["state"], _held["note"]


def _counters(loaded, inputs, pristine, config, shape, profiler, options, gpu):
    """The profile of the counters: every pass around one synchronised launch."""
    import _tforge_profiler
    state, note = _profiler(profiler, options, gpu)
    if state != "ok":
        return {"counters": state, "note": note, "metrics": {}}
    flush = bench._flusher() if gpu else (lambda: None)
    synchronize = torch.cuda.synchronize if gpu else (lambda: None)
    run = bind(loaded, inputs, config, shape)
    run()  # compiles on first use, outside the passes
    synchronize()
    for p in range(_tforge_profiler.passes()):
        for k, v in pristine.items():
            inputs[k].detach().copy_(v)
        flush()
        synchronize()
        _tforge_profiler.begin(p)
        try:
            run()
            synchronize()
        finally:
            _tforge_profiler.end(p)
    return _tforge_profiler.collect()


@taking_variant
def profile(task, config, shape, seed=0, counters=True, profiler="cupti", options=None,
            launches_of=None):
    """Profile `config` at `shape`. Returns {status, message, fatal, counters: ok|refused|failed|
    none, note, metrics, grid_blocks, num_warps, bytes, flops, device (torch's properties; only
    on a GPU)}. Without a GPU, or without `counters`, the counters are "none" and the note says
    why; the launch's facts are there either way. `launches_of` (a kernel's name) asks the
    profiler to count that kernel's launches, with or without a GPU."""
    loaded = get(task)
    gpu = torch.cuda.is_available()
    inputs, pristine = bench._inputs(loaded, shape, seed) if gpu else \
        (make_inputs(loaded, shape, seed), {})
    try:
        facts = _launch_facts(loaded, inputs, config, shape)
    except TaskError:
        raise
    except Exception as e:
        return classify(e)
    cost = cost_at(loaded.spec, shape)
    out = {"status": "ok", "message": "", "fatal": False, "counters": "none", "metrics": {},
           "note": "no GPU: no counters, static metrics only" if not gpu else
           "counters not asked for", "bytes": cost["bytes"], "flops": cost["flops"], **facts}
    if launches_of:
        options = dict(options or {}, kernel=launches_of)
    elif not gpu:
        return out
    if gpu:
        out["device"] = _device()
    if not counters:
        return out
    try:
        out.update(_counters(loaded, inputs, pristine, config, shape, profiler, options or {},
                             gpu))
    except TaskError:
        raise
    except Exception as e:
        failed = classify(e)
        if failed["fatal"]:
            return failed  # the context is gone: the candidate failed, the worker is replaced
        out.update(counters="failed", note=failed["message"], metrics={})
    return out
