"""Evaluations each strategy needed to reach a target speed, from `tforge tune --json` results
of the same task, shape and budget (issue 16: forge reaches bo's final speed in fewer
evaluations, and beats rules).

    python experiments/profile/compare_strategies.py forge=R1.json bo=R2.json rules=R3.json
        [--target bo] [--within 0.01]

The target is the named strategy's best measured time (default bo's); each strategy's count is
the first evaluation (baselines included) whose time is within `within` of it.
"""
import argparse
import json


def times(path):
    r = json.load(open(path))
    return [e.get("ms") if e["status"] == "ok" else None for e in r["history"]], r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="NAME=result.json")
    ap.add_argument("--target", default="bo")
    ap.add_argument("--within", type=float, default=0.01)
    args = ap.parse_args()
    runs = dict(r.split("=", 1) for r in args.runs)
    loaded = {k: times(v) for k, v in runs.items()}
    target = min(t for t in loaded[args.target][0] if t is not None)
    print(f"target: {args.target}'s best measured {target:.4f} ms (within {args.within:.0%})")
    print("| strategy | best measured (ms) | final (re-timed) | evaluations | to target | s |")
    print("|---|---|---|---|---|---|")
    for name, (ts, r) in loaded.items():
        ok = [t for t in ts if t is not None]
        hit = next((i + 1 for i, t in enumerate(ts)
                    if t is not None and t <= target * (1 + args.within)), None)
        print(f"| {name} | {min(ok):.4f} | {r['best'].get('ms', float('nan')):.4f} | {len(ts)} "
              f"| {hit if hit else 'not reached'} | {r['seconds']:.0f} |")


if __name__ == "__main__":
    main()
