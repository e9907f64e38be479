"""Every pair of source transforms composed on each file: for each two parameters of different
transforms that apply to a kernel, both at their last level and both at level 1, `tforge
transform --out` writes the variant, which must parse as Python. Edits refused as overlapping
are counted apart (the space excludes those pairs by a constraint); anything else is a bug.
With --random N, instead N points a file with every parameter at a random level (seed 1), as
a search's initial design draws them.

    python experiments/transforms/compose_pairs.py TFORGE FILE[:KERNEL]... [--random N]

Nothing runs on a GPU or in the interpreter; each composition costs one analysis of the file
(about a second).
"""
import argparse
import ast
import itertools
import random
import re
import subprocess
import sys
import tempfile


def params_of(tforge, path, kernel):
    """[(transform, parameter, [values])] of `tforge transform`'s listing."""
    cmd = [tforge, "transform", path] + (["--kernel", kernel] if kernel else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    params, transform = [], None
    for line in out.splitlines():
        m = re.match(r"  (\w+): ", line)
        if m:
            transform = m.group(1)
            continue
        m = re.match(r"    (\w+)\s{2,}(.+?)\s+\((rewrite|launch option)(?:: [\w-]+)?\)", line)
        if m and transform:
            params.append((transform, m.group(1), [v.strip() for v in m.group(2).split(",")]))
    return params


def points(params, n):
    """The pairs of the docstring as [(name, value)] lists, or n random points over `params`."""
    if n:
        rng = random.Random(1)
        return [[(p, rng.choice(values)) for _, p, values in params] for _ in range(n)]
    out = []
    for (t1, p1, v1), (t2, p2, v2) in itertools.combinations(params, 2):
        if t1 != t2:
            out += [[(p1, a), (p2, b)] for a, b in sorted({(v1[-1], v2[-1]), (v1[1], v2[1])})]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tforge")
    ap.add_argument("targets", nargs="+", help="FILE[:KERNEL]")
    ap.add_argument("--random", type=int, default=0)
    args = ap.parse_args()
    total = refused = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        variant = f"{tmp}/variant.py"
        for target in args.targets:
            path, _, kernel = target.partition(":")
            base = [args.tforge, "transform", path] + (["--kernel", kernel] if kernel else [])
            for point in points(params_of(args.tforge, path, kernel), args.random):
                total += 1
                sets = [a for p, v in point for a in ("--set", f"{p}={v}")]
                r = subprocess.run(base + sets + ["--out", variant], capture_output=True,
                                   text=True)
                if r.returncode == 1 and "overlapping edits" in r.stderr:
                    refused += 1
                    continue
                try:
                    if r.returncode:
                        raise RuntimeError(r.stderr.strip()[-300:])
                    ast.parse(open(variant).read())
                except (RuntimeError, SyntaxError) as e:
                    print(f"{target}: {' '.join(sets[1::2])}: {e}", flush=True)
                    bad += 1
    print(f"{total} points composed: {refused} refused as overlapping, {bad} failed or did not "
          f"parse")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
