#!/usr/bin/env python3
"""`tforge sweep`'s speedup over ranks, measured: a manifest's sweep (default examples.json)
with the replay backend charging each evaluation its recorded wall time as wall time
(`"simulate": F` sleeps compile + benchmark x F on the rank that evaluates it), run on one rank
and under `mpirun -n N --oversubscribe` for each N. Ranks mostly sleep, so on a CPU of few cores
the curve is the dispatcher's (issue 39, item 5) as long as the CPU work (each session's task
load and take-home check on rank 0, each rank's first opening of a task) stays small beside
the sleeps. Prints per rank count the wall seconds, the speedup over one rank, and the charged
seconds (the sum of the sleeps), which one rank cannot beat.

usage: scaling.py TFORGE WORKDIR [--ranks 1,2,4,8] [--simulate F] [--batch B] [--budget N]
                  [--seeds S] [--manifest FILE]
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def manifest(path, simulate, batch, budget, seeds):
    """The manifest's entries, paths made absolute, each once a seed, with the settings."""
    with open(path) as f:
        m = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    tasks = []
    for t in m["tasks"]:
        t = dict(t)
        t["task"] = os.path.normpath(os.path.join(base, t["task"]))
        t["backend"] = "replay:" + os.path.normpath(os.path.join(base, t["backend"][7:]))
        name = t.get("name") or os.path.basename(os.path.dirname(t["task"]))
        for seed in range(1, seeds + 1):
            tasks.append(dict(t, name=f"{name}-s{seed}", seed=seed))
    defaults = dict(m.get("defaults", {}), simulate=simulate, batch=batch, budget=budget)
    return {"defaults": defaults, "tasks": tasks}


def charged(directory, simulate):
    """Seconds the evaluations of a finished sweep slept: each config's recorded compile and
    benchmark time (as the replay backend's wall_ms) x simulate."""
    with open(os.path.join(directory, "sweep.json")) as f:
        entries = json.load(f)["entries"]
    total, evaluations = 0.0, 0
    cache = {}
    for e in entries:
        path = os.path.join(directory, e["result"])
        if e["status"] != "done" or not os.path.exists(path):
            continue
        with open(path) as f:
            r = json.load(f)
        recording = r["backend"][len("replay:"):]
        if recording not in cache:
            with gzip.open(recording, "rt") as f:
                cache[recording] = json.load(f)
        rec = cache[recording]
        for h in r["history"]:
            key = ",".join(str(h["config"][k]) for k in rec["tune_params_keys"])
            point = rec["cache"][key]
            bench = point.get("benchmark_time")
            if not isinstance(bench, (int, float)):
                bench = sum(t for t in point.get("times") or [] if isinstance(t, (int, float)))
            total += ((point.get("compile_time") or 0) + bench) * simulate / 1e3
            evaluations += 1
    return total, evaluations


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("tforge")
    p.add_argument("work")
    p.add_argument("--ranks", default="1,2,4,8")
    p.add_argument("--simulate", type=float, default=1.0)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--budget", type=int, default=20)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--manifest", default=os.path.join(HERE, "examples.json"))
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, "sweep.json")
    with open(path, "w") as f:
        json.dump(manifest(a.manifest, a.simulate, a.batch, a.budget, a.seeds), f, indent=1)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    tforge = os.path.abspath(a.tforge)
    print(f"{path}: simulate {a.simulate}, batch {a.batch}, budget {a.budget}, {a.seeds} seed(s)")
    print("| ranks | wall s | speedup | evaluations | charged s | the sweep's line |")
    print("|---|---|---|---|---|---|")
    one = None
    for ranks in (int(r) for r in a.ranks.split(",")):
        out = os.path.join(a.work, f"ranks{ranks}")
        subprocess.run(["rm", "-rf", out], check=True)
        command = [tforge, "sweep", path, "--out", out, "-q"]
        if ranks > 1:
            command = ["mpirun", "-n", str(ranks), "--oversubscribe"] + command
        start = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.monotonic() - start
        said = [l for l in done.stdout.splitlines() if l.startswith("sweep:")]
        line = said[0].split("; ")[0] if said else (done.stderr.strip().splitlines() or ["?"])[-1]
        one = one or wall
        slept, n = charged(out, a.simulate)
        print(f"| {ranks} | {wall:.1f} | {one / wall:.2f}x | {n} | {slept:.1f} | {line} |",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
