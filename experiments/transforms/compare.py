#!/usr/bin/env python3
"""Time tuned winners against each other, the task's baseline and a torch expression, on the GPU,
interleaved (interleave.py: the engine's timing protocol, every entry bound afresh each round,
the order rotating); the table gives each entry's median over rounds and its speed relative to
the first --torch entry (or to the baseline without one). The same --run given twice under two
names measures the spread that is left.

Each --run DIR is a `tforge tune` results folder: its winner's config (result.json) and, when
it rewrote the kernel, its variant (best_variant.py; the variant runs in place of the kernel).
Usage: python3 experiments/transforms/compare.py TASK.json [--shape I] [--rounds R]
           [--bind-once] [--run NAME=DIR]... [--torch NAME=EXPR]...
  EXPR is Python over the task's inputs at the tuning shape and `torch`, `F`
  (torch.nn.functional): "torch.matmul(a, b)", "F.scaled_dot_product_attention(q, k, v)".
"""
import argparse
import json
import os

from interleave import Entries, table, worker


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=0, help="default: twice the entries")
    ap.add_argument("--bind-once", action="store_true",
                    help="bind each entry once, before the first round (to see what binding "
                         "afresh each round removes)")
    ap.add_argument("--run", action="append", default=[])
    ap.add_argument("--torch", action="append", default=[])
    a = ap.parse_args()
    spec = worker.load_task(a.task)
    loaded = worker.get(spec)
    shape = spec["shapes"]["tune"][a.shape]
    entries = Entries(loaded, shape)
    entries.kernel("baseline", worker._baselines_at(loaded, shape)[0])
    for item in a.run:
        name, folder = item.split("=", 1)
        result = json.load(open(os.path.join(folder, "result.json")))
        variant = None
        if (result.get("transforms") or {}).get("winner"):
            with open(os.path.join(folder, "best_variant.py")) as f:
                variant = f.read()
        entries.kernel(name, result["best"]["config"], variant)
    for item in a.torch:
        entries.torch_op(*item.split("=", 1))
    rounds = a.rounds or 2 * len(entries.items)
    times = entries.time(rounds, a.bind_once)
    bound = "bound once" if a.bind_once else "bound afresh each round"
    print(f"{spec['kernel']} at {shape}, {rounds} rounds interleaved, {bound} (medians)")
    print("\n".join(table(times, a.torch[0].split("=", 1)[0] if a.torch else "baseline")))


if __name__ == "__main__":
    main()
