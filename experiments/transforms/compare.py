#!/usr/bin/env python3
"""Time tuned winners against each other, the task's baseline and a torch expression, on the GPU,
interleaved: round r times every entry once (do_bench, L2 flushed), starting at entry r (the
order rotates, so that no entry always follows the same one), then round r + 1 ...; the table
gives each entry's median over rounds and its speed relative to the first --torch entry (or to
the baseline without one). The same --run given twice under two names measures the spread (on the
H200, matmul 4096^3: 2.6% between the two, experiments/NOTES.md, session 17).

Each --run DIR is a `tforge tune` results folder: its winner's config (result.json) and, when
it rewrote the kernel, its variant (best_variant.py; the variant runs in place of the kernel).
Usage: python3 experiments/transforms/compare.py TASK.json [--shape I] [--rounds R]
           [--run NAME=DIR]... [--torch NAME=EXPR]...
  EXPR is Python over the task's inputs at the tuning shape and `torch`, `F`
  (torch.nn.functional), `math`: "torch.matmul(a, b)",
  "F.scaled_dot_product_attention(q, k, v)".
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F
import triton.testing

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "engine", "worker",
                                "python"))
from tforge_worker import variants, worker  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=0, help="default: twice the entries")
    ap.add_argument("--run", action="append", default=[])
    ap.add_argument("--torch", action="append", default=[])
    a = ap.parse_args()
    spec = worker.load_task(a.task)
    loaded = worker.get(spec)
    shape = spec["shapes"]["tune"][a.shape]
    inputs = worker.make_inputs(loaded, shape, 0)
    entries = [("baseline", worker.bind(loaded, inputs, worker._baselines_at(loaded, shape)[0],
                                        shape), None)]
    for item in a.run:
        name, folder = item.split("=", 1)
        result = json.load(open(os.path.join(folder, "result.json")))
        config = result["best"]["config"]
        variant = None
        if (result.get("transforms") or {}).get("winner"):
            with open(os.path.join(folder, "best_variant.py")) as f:
                variant = f.read()
        with variants.active(loaded, variant):
            entries.append((name, worker.bind(loaded, inputs, config, shape), variant))
    env = {"torch": torch, "F": F, "math": math, **inputs}
    for item in a.torch:
        name, expr = item.split("=", 1)
        entries.append((name, eval(f"lambda: {expr}", env), None))
    times = {name: [] for name, _, _ in entries}
    a.rounds = a.rounds or 2 * len(entries)
    for r in range(a.rounds):
        for name, run, variant in entries[r % len(entries):] + entries[:r % len(entries)]:
            with variants.active(loaded, variant):
                times[name].append(triton.testing.do_bench(run, warmup=25, rep=100))
    ref = a.torch[0].split("=", 1)[0] if a.torch else "baseline"
    ref_ms = statistics.median(times[ref])
    print(f"{spec['kernel']} at {shape}, {a.rounds} rounds interleaved (do_bench medians)")
    print(f"{'entry':24} {'median ms':>10} {'speed vs ' + ref:>16}")
    for name, _, _ in entries:
        m = statistics.median(times[name])
        print(f"{name:24} {m:10.4f} {ref_ms / m:15.3f}x")


if __name__ == "__main__":
    main()
