#!/usr/bin/env python3
"""A copy of a task whose space is one tuned config (and its baseline that config), written
beside the task (its relative paths stay valid): the source transforms then search alone, on
top of the knobs a first `tforge tune` found.
Usage: python3 experiments/transforms/pin.py TASK.json RESULT.json OUT.json"""
import json
import sys

task, result, out = sys.argv[1:]
t, best = json.load(open(task)), json.load(open(result))["best"]["config"]
t["baseline"] = best
t["space"] = {"params": {k: [v] for k, v in best.items()}, "constraints": []}
json.dump(t, open(out, "w"), indent=1)
