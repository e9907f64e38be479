"""Timing a config on the GPU, the way triton.testing.do_bench does, with every sample kept.

Each launch is bracketed by its own pair of CUDA events. Before each one the L2 cache is flushed
by reading a 256 MB buffer (larger than any current L2) and, for kernels that write their inputs,
the inputs are restored; neither is inside the events. The flush reads rather than zeroes (as
do_bench does): a zeroing flush leaves the L2 full of dirty lines whose write-back the next kernel
pays for (9-12% of a 0.2 ms matmul on an H200; experiments/NOTES.md, "timing, settled"). The GPU
must still be busy when the kernel is queued: otherwise the start event fires at once and the
CPU's launch time (25-150 us for a Triton 3.6 launch, measured on an H200) is timed as kernel
time. The flush is repeated until it covers twice the launch's CPU time, so that the GPU never
idles between launches: an idle GPU (a queued sleep, as this protocol once used) runs the next
kernel at another power state, 6-7% faster than back to back. Without a flush, a GPU sleep
covers the launch instead.
Warm-up and repeat counts come from an estimate of the kernel's duration.
Known bias: events add about 3.5 us to each launch's own duration (CUPTI's activity records of
the same launches): 1.7% of a 0.2 ms kernel, 0.2% of a 2 ms one.
"""

import math
import statistics
import time as _time

import torch

from . import energy as _energy
from .task import TaskError
from .worker import bind, classify, get, make_inputs, taking_variant

_FLUSH_BYTES = 256 << 20
_buffers = {}


def _flusher():
    """One L2 flush: reads the 256 MB buffer (into a kept scalar), which evicts what the L2
    held and dirties nothing."""
    if "l2" not in _buffers:
        _buffers["l2"] = torch.zeros(_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        _buffers["sink"] = torch.zeros((), dtype=torch.int64, device="cuda")
    buf, sink = _buffers["l2"], _buffers["sink"]
    return lambda: torch.sum(buf, 0, dtype=torch.int64, out=sink)


def _quantile(xs, q):
    """Linear interpolation between order statistics (xs sorted)."""
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _inputs(loaded, shape, seed):
    """Timing inputs are made once per (shape, seed) and kept: making them costs more than a
    measurement. Inputs the kernel writes are restored from a pristine copy before each launch."""
    key = (tuple(sorted(shape.items())), seed)
    held = loaded.cache.get("bench_inputs")
    if held is None or held[0] != key:
        loaded.cache.pop("bench_inputs", None)
        inputs = make_inputs(loaded, shape, seed)
        pristine = {k: v.clone() for k, v in inputs.items() if isinstance(v, torch.Tensor)} \
            if loaded.spec["writes_inputs"] else {}
        held = (key, inputs, pristine)
        loaded.cache["bench_inputs"] = held
    return held[1], held[2]


def restorer(inputs, pristine):
    """What puts back the inputs a launch writes (from _inputs' pristine copies), or None when
    it writes none."""
    if not pristine:
        return None

    def restore():
        for k, v in pristine.items():
            inputs[k].detach().copy_(v)  # detached: an input may take gradients
    return restore


def _device_uuid():
    """This process's device as NVML names it (torch's UUID), None when torch does not say."""
    try:
        return str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
    except Exception:  # an older torch: NVML's first device
        return None


def _clock_mhz():
    try:
        return torch.cuda.clock_rate()
    except Exception:  # needs NVML (pynvml); the clock is then simply not recorded
        return None


def measure(run, restore=None, warmup_ms=25.0, rep_ms=100.0, min_repeats=10,
            max_repeats=1000, flush_l2=True, samples=False):
    """Time `run` (a function that launches work on the GPU and returns without synchronising)
    by the protocol above; `restore` (or None) puts back the inputs the launch writes and is not
    timed. Returns {median_ms, min_ms, max_ms, mean_ms, q25_ms, q75_ms, iqr_ms, spread (IQR /
    median), n, warmup, flush_l2, launch_overhead_us (CPU time of one launch call), flushes
    (before each timed launch), sleep_cycles (without a flush), samples_ms (when asked)}.
    What `run` raises is raised."""
    flush = _flusher() if flush_l2 else None

    def prepare(sleep_cycles, flushes):
        if restore is not None:
            restore()
        if sleep_cycles:
            torch.cuda._sleep(sleep_cycles)
        for _ in range(flushes):
            flush()

    run()  # compiles on first use
    torch.cuda.synchronize()
    # Estimate the kernel's time, the CPU time of one launch and the flush's GPU time.
    cpu, est, flush_ms = [], [], []
    for _ in range(5):
        f0, f1, s, e = (torch.cuda.Event(enable_timing=True) for _ in range(4))
        # Cover the launch here too (twice the slowest seen so far): otherwise, without a
        # flush that covers it, the estimate of a short kernel includes the launch's CPU
        # time and the counts below come out too small. The first run is uncovered; min()
        # drops it.
        if cpu:
            torch.cuda._sleep(int(2 * max(cpu) * 2.5e9))
        f0.record()
        prepare(0, 1 if flush else 0)
        f1.record()
        s.record()
        t0 = _time.perf_counter()
        run()
        cpu.append(_time.perf_counter() - t0)
        e.record()
        torch.cuda.synchronize()
        est.append(s.elapsed_time(e))
        flush_ms.append(f0.elapsed_time(f1))
    estimate_ms = max(min(est), 1e-4)
    overhead_s = statistics.median(cpu)
    # Cover twice the launch's CPU time: with more flushes (the GPU stays busy), or without a
    # flush with a sleep, in cycles of a clock no faster than 2.5 GHz.
    cover_s = 2 * overhead_s
    if flush:
        flush_s = max(min(flush_ms), 1e-3) / 1e3
        flushes, sleep_cycles = max(1, math.ceil(cover_s / flush_s)), 0
    else:
        flushes, sleep_cycles = 0, int(cover_s * 2.5e9)
    n_warmup = max(1, min(max_repeats, int(warmup_ms / estimate_ms)))
    n_repeat = max(min_repeats, min(max_repeats, int(rep_ms / estimate_ms)))
    for _ in range(n_warmup):
        prepare(0, 1 if flush else 0)
        run()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for s, e in zip(starts, ends):
        prepare(sleep_cycles, flushes)
        s.record()
        run()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    median = statistics.median(times)
    q25, q75 = _quantile(times, 0.25), _quantile(times, 0.75)
    out = {"median_ms": median, "min_ms": times[0], "max_ms": times[-1],
           "mean_ms": statistics.fmean(times), "q25_ms": q25, "q75_ms": q75,
           "iqr_ms": q75 - q25, "spread": (q75 - q25) / median if median > 0 else None,
           "n": len(times), "warmup": n_warmup, "flush_l2": flush_l2,
           "launch_overhead_us": overhead_s * 1e6, "flushes": flushes,
           "sleep_cycles": sleep_cycles}
    if samples:
        out["samples_ms"] = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return out


@taking_variant
def time(task, config, shape, seed=0, warmup_ms=25.0, rep_ms=100.0, min_repeats=10,
         max_repeats=1000, flush_l2=True, samples=False, energy=True):
    """Time `config` on `shape` (measure()), then, with `energy`, run it back to back under the
    observers (energy.py). Returns {status: ok|unsupported|compile|runtime, message, what
    measure() returns, sm_clock_mhz before/after, device, and the observers' metrics (energy_j,
    power_w, sm_clock_mhz) or energy_note, why there are none}. Without CUDA the status is
    'unsupported': never a made-up number."""
    if not torch.cuda.is_available():
        return {"status": "unsupported", "fatal": False,
                "message": "timing needs a CUDA device; none is available"}
    loaded = get(task)
    inputs, pristine = _inputs(loaded, shape, seed)
    clock_before = _clock_mhz()
    try:
        run = bind(loaded, inputs, config, shape)  # inputs are restored in place: stays valid
        out = measure(run, restorer(inputs, pristine), warmup_ms, rep_ms, min_repeats,
                      max_repeats, flush_l2, samples)
        if energy:
            seen, note = _energy.observe(run, torch.cuda.synchronize, out["median_ms"],
                                         _device_uuid())
            out.update(seen)
            if note:
                out["energy_note"] = note
    except TaskError:
        raise
    except Exception as e:
        return classify(e)
    return {"status": "ok", "message": "", "fatal": False, **out,
            "sm_clock_mhz_before": clock_before, "sm_clock_mhz_after": _clock_mhz(),
            "device": torch.cuda.get_device_name()}
