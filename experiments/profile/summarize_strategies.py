"""Issue 16's criterion over many tunes: from folders of `tforge tune --json` results named
K_forge.json, K_bo.json and K_rules.json (what `h200_tune.sh strategies:K` writes; one folder a
seed or a call), the evaluations each strategy needed to reach bo's best measured time (within
1%), and forge's final speed against rules' and bo's, per (kernel, folder) and over all of them.

    python experiments/profile/summarize_strategies.py RUNS_DIR [RUNS_DIR ...] [--within 0.01]

A strategy that never reached the target counts as one more evaluation than it made, for the
median; the final speeds are the re-timed winners (`best.ms`), the ratio is the other's time
over forge's (above 1: forge faster).
"""
import argparse
import glob
import json
import math
import os
import statistics


def load(path):
    r = json.load(open(path))
    ms = [e.get("ms") if e["status"] == "ok" else None for e in r["history"]]
    return ms, r["best"]["ms"]


def reached(ms, target, within):
    return next((i + 1 for i, t in enumerate(ms) if t is not None and t <= target * (1 + within)),
                None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--within", type=float, default=0.01)
    args = ap.parse_args()
    rows = []
    for d in args.dirs:
        for forge in sorted(glob.glob(os.path.join(d, "*_forge.json"))):
            kernel = os.path.basename(forge)[:-len("_forge.json")]
            paths = {s: os.path.join(d, f"{kernel}_{s}.json") for s in ("forge", "bo", "rules")}
            if not all(os.path.exists(p) for p in paths.values()):
                continue
            runs = {s: load(p) for s, p in paths.items()}
            target = min(t for t in runs["bo"][0] if t is not None)
            hits = {s: reached(ms, target, args.within) for s, (ms, _) in runs.items()}
            counts = {s: h if h else len(runs[s][0]) + 1 for s, h in hits.items()}
            rows.append((kernel, d, hits, counts, runs["rules"][1] / runs["forge"][1],
                         runs["bo"][1] / runs["forge"][1]))
    if not rows:
        raise SystemExit("no folder holds K_forge.json, K_bo.json and K_rules.json")
    print("| kernel | folder | evals to bo's best: forge / bo / rules | rules / forge | bo / forge |")
    print("|---|---|---|---|---|")
    for kernel, d, hits, _, vs_rules, vs_bo in rows:
        shown = " / ".join(str(hits[s]) if hits[s] else "not reached" for s in ("forge", "bo",
                                                                                 "rules"))
        print(f"| {kernel} | {d} | {shown} | {vs_rules:.3f} | {vs_bo:.3f} |")
    med = {s: statistics.median(c[s] for _, _, _, c, _, _ in rows) for s in ("forge", "bo",
                                                                          "rules")}
    fewer = sum(c["forge"] < c["bo"] for _, _, _, c, _, _ in rows)
    ratios = [r for *_, r, _ in rows]
    wins = sum(r > 1 for r in ratios)
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\n{len(rows)} tunes. Evaluations to bo's best, median: forge {med['forge']:g}, "
          f"bo {med['bo']:g}, rules {med['rules']:g}; forge fewer than bo in {fewer}. "
          f"Final speed, rules' time over forge's: median {statistics.median(ratios):.3f}, "
          f"geomean {geo:.3f}, forge faster in {wins} of {len(rows)}.")


if __name__ == "__main__":
    main()
