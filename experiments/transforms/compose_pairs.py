"""Every pair of source transforms composed on each file: for each two parameters of different
transforms that apply to a kernel, both at their last level and both at level 1, `tforge
transform --out` writes the variant, which must parse as Python. Edits refused as overlapping
are counted apart (the space excludes those pairs by a constraint); anything else is a bug.

    python experiments/transforms/compose_pairs.py TFORGE FILE[:KERNEL]...

Nothing runs on a GPU or in the interpreter; each composition costs one analysis of the file
(about a second).
"""
import ast
import itertools
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
        m = re.match(r"    (\w+)\s{2,}(.+?)\s+\((rewrite|launch option)\)", line)
        if m and transform:
            params.append((transform, m.group(1), [v.strip() for v in m.group(2).split(",")]))
    return params


def main():
    tforge, targets = sys.argv[1], sys.argv[2:]
    total = refused = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        variant = f"{tmp}/variant.py"
        for target in targets:
            path, _, kernel = target.partition(":")
            base = [tforge, "transform", path] + (["--kernel", kernel] if kernel else [])
            for (t1, p1, v1), (t2, p2, v2) in itertools.combinations(
                    params_of(tforge, path, kernel), 2):
                if t1 == t2:
                    continue
                for a, b in {(v1[-1], v2[-1]), (v1[1], v2[1])}:
                    total += 1
                    r = subprocess.run(base + ["--set", f"{p1}={a}", "--set", f"{p2}={b}",
                                               "--out", variant], capture_output=True, text=True)
                    if r.returncode == 1 and "overlapping edits" in r.stderr:
                        refused += 1
                        continue
                    try:
                        if r.returncode:
                            raise RuntimeError(r.stderr.strip()[-300:])
                        ast.parse(open(variant).read())
                    except (RuntimeError, SyntaxError) as e:
                        print(f"{target}: {p1}={a} {p2}={b}: {e}", flush=True)
                        bad += 1
    print(f"{total} pairs composed: {refused} refused as overlapping, {bad} failed or did not "
          f"parse")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
