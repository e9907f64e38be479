"""Interleaved timing of several launches on the GPU, by the engine's own protocol
(tforge_worker.bench.measure: the L2 flushed by a read before each launch, the launch's CPU time
covered; under do_bench's zeroing flush one matmul config timed 2.6-3.7% apart under two names
on the H200, under this one 0.2%: experiments/NOTES.md, sessions 17 and 18). Round r makes every
entry's launch afresh (a task's kernel is bound again, its outputs allocated again, so that no
entry keeps one set of addresses) and times each once, both in an order that starts at entry r;
each entry's result is its median over the rounds.
"""
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "engine", "worker", "python"))
from tforge_worker import bench, variants, worker  # noqa: E402


class Entries:
    """The entries of one comparison on one task's inputs at one shape."""

    def __init__(self, loaded, shape):
        self.loaded, self.shape = loaded, shape
        self.inputs, pristine = bench._inputs(loaded, shape, 0)
        self.restore = bench.restorer(self.inputs, pristine)
        self.items = []  # (name, config or None, variant text or None, torch launch or None)

    def kernel(self, name, config, variant=None):
        self.items.append((name, config, variant, None))

    def torch_op(self, name, expr):
        """EXPR: Python over the inputs and `torch`, `F` (torch.nn.functional)."""
        env = {"torch": torch, "F": F, **self.inputs}
        self.items.append((name, None, None, eval(f"lambda: {expr}", env)))

    def time(self, rounds, bind_once=False):
        """{name: [median ms of each round]}."""
        def bind(order):
            runs = {}
            for name, config, variant, op in order:
                with variants.active(self.loaded, variant):
                    runs[name] = op or worker.bind(self.loaded, self.inputs, config, self.shape)
            return runs
        times = {name: [] for name, *_ in self.items}
        runs = bind(self.items) if bind_once else None
        for r in range(rounds):
            order = self.items[r % len(self.items):] + self.items[:r % len(self.items)]
            if not bind_once:
                runs = None  # the last round's outputs go back to the allocator first
                runs = bind(order)
            for name, _, variant, _ in order:
                with variants.active(self.loaded, variant):
                    times[name].append(bench.measure(runs[name], self.restore)["median_ms"])
        return times


def table(times, ref):
    """Lines: each entry's median over rounds and its speed relative to entry `ref`."""
    ref_ms = statistics.median(times[ref])
    lines = [f"{'entry':40} {'median ms':>10} {'speed vs ' + ref:>20}"]
    for name, ts in times.items():
        m = statistics.median(ts)
        lines.append(f"{name:40} {m:10.4f} {ref_ms / m:19.3f}x")
    return lines
