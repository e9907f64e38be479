#!/usr/bin/env python3
"""Two sweeps of one manifest compared (tforge sweep's folders, DIR/sweep.json): for every
(task, shape) its status, its winner (config and median ms), its baseline and its evaluations
in order, and whether they agree. Prints a table; exits 1 when a (task, shape) differs.

usage: compare.py DIR_A DIR_B
"""
import json
import os
import sys


def entries(directory):
    with open(os.path.join(directory, "sweep.json")) as f:
        return {(e["name"], e["shape"]): e for e in json.load(f)["entries"]}


def result(directory, entry):
    path = os.path.join(directory, entry["result"])
    if entry["status"] != "done" or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def main(a, b):
    ea, eb = entries(a), entries(b)
    if ea.keys() != eb.keys():
        sys.exit(f"the sweeps list different (task, shape)s: {sorted(ea)} against {sorted(eb)}")
    differ = 0
    print("| task | shape | status | winner | ms | x baseline | evaluations | same |")
    print("|---|---|---|---|---|---|---|---|")
    for key in ea:
        ra, rb = result(a, ea[key]), result(b, eb[key])
        status = ea[key]["status"] + ("" if ea[key]["status"] == eb[key]["status"]
                                      else " / " + eb[key]["status"])
        if ra is None or rb is None:
            same = ra is None and rb is None
            why = (ea[key].get("error") or eb[key].get("error") or "")[:80]
            print(f"| {key[0]} | {key[1]} | {status} | {why} | | | | {'yes' if same else 'NO'} |")
            differ += not same
            continue
        history = lambda r: [(h["config"], h["status"], h.get("ms")) for h in r["history"]]
        same = (ra["best"] == rb["best"] and ra["baseline"] == rb["baseline"] and
                history(ra) == history(rb))
        differ += not same
        print(f"| {key[0]} | {key[1]} | {status} | `{json.dumps(ra['best']['config'])}` | "
              f"{ra['best']['ms']:.4g} | {ra['speedup']:.2f} | {len(ra['history'])} | "
              f"{'yes' if same else 'NO'} |")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
