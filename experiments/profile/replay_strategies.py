"""Issue 16's criterion offline: forge, bo and rules replayed on recorded spaces (`tforge replay
--json`, many seeds; recordings with counters steer forge and rules by them), and per
(recording, seed) the evaluations each needed to reach bo's final best of that seed (within 1%),
and forge's final best against rules' and bo's, over all of them.

    python experiments/profile/replay_strategies.py TFORGE RECORDING... [--budget 30]
        [--seeds 50] [--within 0.01] [--batch 4]

A strategy that never reached the target counts as one more evaluation than the budget, for the
median; a final ratio is the other's best time over forge's (above 1: forge faster).
"""
import argparse
import json
import math
import os
import statistics
import subprocess

STRATEGIES = ("forge", "bo", "rules")


def geomean(xs):
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def reached(trace, target, within, budget):
    return next((i + 1 for i, t in enumerate(trace[:budget]) if t <= target * (1 + within)),
                budget + 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tforge")
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--batch", type=int, default=4, help="points asked at once (tune's default)")
    ap.add_argument("--within", type=float, default=0.01)
    args = ap.parse_args()
    evals = {s: [] for s in STRATEGIES}
    ratios = {"rules": [], "bo": []}
    print(f"budget {args.budget}, {args.seeds} seeds, batches of {args.batch}; evaluations to "
          f"bo's final best (median over seeds), final best over forge's (geomean)")
    print("| recording | forge | bo | rules | forge fewer than bo | rules / forge | bo / forge |")
    print("|---|---|---|---|---|---|---|")
    for path in args.recordings:
        out = subprocess.run([args.tforge, "replay", "--cache", path, "--strategy",
                              ",".join(STRATEGIES), "--budget", str(args.budget), "--seeds",
                              str(args.seeds), "--batch", str(args.batch), "--json"],
                             capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
        if doc["higher_is_better"]:
            raise SystemExit(f"{path}: an objective to maximise; compare times")
        # best so far after each evaluation; None until a first configuration ran
        traces = {s["strategy"]: [[math.inf if t is None else t for t in trace]
                                  for trace in s["traces"]] for s in doc["strategies"]}
        per = {s: [] for s in STRATEGIES}
        fewer, rel = 0, {"rules": [], "bo": []}
        for k in range(args.seeds):
            final = {s: min(traces[s][k][:args.budget]) for s in STRATEGIES}
            for s in STRATEGIES:
                per[s].append(reached(traces[s][k], final["bo"], args.within, args.budget))
            fewer += per["forge"][-1] < per["bo"][-1]
            for other in rel:
                rel[other].append(final[other] / final["forge"])
        for s in STRATEGIES:
            evals[s] += per[s]
        for other in rel:
            ratios[other] += rel[other]
        print(f"| {os.path.basename(path)} | " +
              " | ".join(f"{statistics.median(per[s]):g}" for s in STRATEGIES) +
              f" | {fewer}/{args.seeds} | {geomean(rel['rules']):.4f} | "
              f"{geomean(rel['bo']):.4f} |")
    n = len(evals["forge"])
    print(f"\nover {n} (recording, seed) runs: median evaluations to bo's final best: " +
          ", ".join(f"{s} {statistics.median(evals[s]):g}" for s in STRATEGIES))
    for other in ratios:
        xs = ratios[other]
        print(f"{other} / forge final: geomean {geomean(xs):.4f}, forge faster in "
              f"{sum(x > 1 for x in xs)}, equal in {sum(x == 1 for x in xs)}, slower in {sum(x < 1 for x in xs)}")


if __name__ == "__main__":
    main()
