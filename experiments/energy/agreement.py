#!/usr/bin/env python3
"""Does the engine's energy per launch (NVML's total-energy counter around a batch of launches,
tforge_worker.energy) agree with the power nvidia-smi samples over the same window? For each task
the baseline runs back to back for --seconds under energy.observe (the engine's own code), while
`nvidia-smi --query-gpu=timestamp,power.draw --format=csv -lms 50` samples the GPU; the samples
inside the batch's window (less its first --settle seconds: nvidia-smi's power.draw is a moving
average on recent drivers) give a mean power, which times the window over the launches is the
joules per launch nvidia-smi implies. Prints one line a task and the largest disagreement.
Usage (on a GPU): python3 experiments/energy/agreement.py TASK.json... [--seconds 4] [--settle 1]
"""
import argparse
import datetime
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "engine", "worker", "python"))
import torch  # noqa: E402

from tforge_worker import bench, energy, worker  # noqa: E402


def sampler(index):
    """nvidia-smi sampling the GPU's power every 50 ms, line-buffered."""
    return subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,power.draw", "--format=csv,noheader,nounits",
         "-lms", "50", "-i", str(index)], stdout=subprocess.PIPE, text=True, bufsize=1)


def samples_of(lines):
    """(datetime, watts) of each well-formed line."""
    out = []
    for line in lines:
        try:
            stamp, watts = [x.strip() for x in line.split(",")]
            out.append((datetime.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f"), float(watts)))
        except ValueError:
            continue
    return out


def measure(task, seconds, settle, index):
    spec = worker.load_task(task)
    loaded = worker.get(spec)
    shape = spec["shapes"]["tune"][0]
    inputs, _ = bench._inputs(loaded, shape, 0)
    run = worker.bind(loaded, inputs, worker._baselines_at(loaded, shape)[0], shape)
    estimate = bench.measure(run)["median_ms"]
    energy.MIN_WINDOW_S = seconds  # one long batch, as the engine's would be for a long window
    smi = sampler(index)
    time.sleep(1.0)  # its first samples
    seen, note = energy.observe(run, torch.cuda.synchronize, estimate, bench._device_uuid())
    end = datetime.datetime.now()
    time.sleep(0.2)
    smi.terminate()
    lines = smi.communicate()[0].splitlines()
    if note:
        return f"{spec['kernel']}: no energy ({note})", None
    window = seen["batch_s"]
    start = end - datetime.timedelta(seconds=window)
    inside = [w for t, w in samples_of(lines)
              if start + datetime.timedelta(seconds=settle) <= t <= end]
    if not inside:
        return f"{spec['kernel']}: no nvidia-smi sample inside the window", None
    smi_w = sum(inside) / len(inside)
    smi_j = smi_w * window / seen["batch_launches"]
    diff = seen["energy_j"] / smi_j - 1
    return (f"{spec['kernel']}: {estimate:.4f} ms a launch, batch of {window:.2f} s; "
            f"NVML counter {seen['energy_j'] * 1e3:.3f} mJ/launch ({seen['power_w']:.0f} W, SM "
            f"{seen['sm_clock_mhz']} MHz); nvidia-smi {smi_w:.0f} W mean of {len(inside)} samples "
            f"-> {smi_j * 1e3:.3f} mJ/launch; counter vs smi {diff * 100:+.1f}%"), diff


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--settle", type=float, default=1.0)
    a = ap.parse_args()
    index = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0)
    diffs = []
    for task in a.tasks:
        line, diff = measure(task, a.seconds, a.settle, index)
        print(line, flush=True)
        if diff is not None:
            diffs.append(abs(diff))
    if diffs:
        verdict = "within" if max(diffs) <= 0.10 else "NOT within"
        print(f"energy agreement: largest |difference| {max(diffs) * 100:.1f}% over "
              f"{len(diffs)} kernels, {verdict} 10%")


if __name__ == "__main__":
    main()
