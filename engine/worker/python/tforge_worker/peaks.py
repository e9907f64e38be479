"""The device's peaks, measured (never a data sheet's): DRAM bytes/s by a streaming copy, fp16
tensor-core flop/s by a large matmul, fp32 flop/s by a Triton loop of dependent FMAs; each the
best of several timed runs, a few seconds in all. Written as a device file (the fields of
`tforge_costmodel_device`, include/tforge/plugin/costmodel.h), cached by the device's name in
the user's cache dir ($XDG_CACHE_HOME/tforge/devices/, else ~/.cache/tforge/devices/).

    python -m tforge_worker.peaks [--out FILE] [--force]

prints the file's path; a cached file is reused unless --force. The engine calls `cached()`
(an entry point): the same, for the current device, measured on the first call.
"""

import argparse
import datetime
import json
import os
import re
import sys

FORMAT = "tforge.device/1"


def cache_path(name):
    """Where the device named `name` is cached: its name with every run of characters other
    than letters, digits, '.' and '-' made one '_'."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "tforge", "devices", re.sub(r"[^A-Za-z0-9.-]+", "_", name) + ".json")


def _best_seconds(fn, repeats):
    """The least time of `repeats` runs of fn (after two warm-up runs), by CUDA events."""
    import torch
    fn()
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


def copy_bytes_per_s(nbytes=1 << 30, repeats=20):
    """A device-to-device copy of `nbytes` (far past L2): read once and written once."""
    import torch
    x = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    x.fill_(1.0)
    return 2 * nbytes / _best_seconds(lambda: y.copy_(x), repeats)


def matmul_fp16_flops_per_s(n=8192, repeats=20):
    """An n x n x n fp16 matmul with fp32 accumulation (cuBLAS on the tensor cores)."""
    import torch
    a = torch.randn(n, n, dtype=torch.float16, device="cuda")
    b = torch.randn(n, n, dtype=torch.float16, device="cuda")
    c = torch.empty(n, n, dtype=torch.float16, device="cuda")
    return 2 * n ** 3 / _best_seconds(lambda: torch.matmul(a, b, out=c), repeats)


def fma_fp32_flops_per_s(iterations=4096, repeats=10):
    """Every thread of a grid of many waves runs `iterations` steps of 4 independent chains of
    x = x * a + b (2 flops each) in registers, then stores once: arithmetic only."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def fma_loop(out, a, b, ITERATIONS: tl.constexpr, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x0 = offsets.to(tl.float32)
        x1 = x0 + 1.0
        x2 = x0 + 2.0
        x3 = x0 + 3.0
        for _ in range(ITERATIONS):
            x0 = x0 * a + b
            x1 = x1 * a + b
            x2 = x2 * a + b
            x3 = x3 * a + b
        tl.store(out + offsets, x0 + x1 + x2 + x3)

    block = 1024
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    programs = props.multi_processor_count * 64
    out = torch.empty(programs * block, dtype=torch.float32, device="cuda")
    run = lambda: fma_loop[(programs,)](out, 0.999, 0.001, ITERATIONS=iterations, BLOCK=block,
                                        num_warps=8)
    flops = 2 * 4 * iterations * programs * block
    return flops / _best_seconds(run, repeats)


def measure():
    """The device file's fields for the current CUDA device."""
    import torch
    import triton
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "format": FORMAT,
        "source": "measured",
        "name": props.name,
        "sms": props.multi_processor_count,
        "max_threads_per_sm": props.max_threads_per_multi_processor,
        "registers_per_sm": props.regs_per_multiprocessor,
        "shared_bytes_per_sm": props.shared_memory_per_multiprocessor,
        "dram_bytes_per_s": copy_bytes_per_s(),
        "flops_per_s": matmul_fp16_flops_per_s(),
        "flops_per_s_fp32": fma_fp32_flops_per_s(),
        "how": "1 GiB float32 copy (2 bytes moved per byte); 8192^3 fp16 torch.matmul; Triton "
               "loop of fp32 FMAs; each the best of its timed runs",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def write(path):
    """Measures the current device into the device file at `path` (written whole or not at
    all)."""
    fields = measure()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(fields, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def cached():
    """The current device's file in the cache, measured first when it is not there yet; raises
    RuntimeError without a CUDA device."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device: its peaks cannot be measured here")
    path = cache_path(torch.cuda.get_device_name())
    if not os.path.exists(path):
        write(path)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tforge_worker.peaks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="the device file (default: the cache's, by device name)")
    parser.add_argument("--force", action="store_true", help="measure even when cached")
    args = parser.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("peaks: no CUDA device: nothing to measure", file=sys.stderr)
        return 2
    path = args.out or cache_path(torch.cuda.get_device_name())
    if args.force or not os.path.exists(path):
        write(path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
