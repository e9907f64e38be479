"""Where the source rewrites apply on code we do not tune on: every entry kernel (a jit
function no other jit function of its file calls) of the Triton files under the given folders,
through `tforge transform FILE --kernel K`; per rewrite (REWRITES: the transforms that change
a kernel's structure), on how many it says it applies. A kernel whose analysis holds none of
the records those need (`may_rewrite`) is not asked: each one's create refuses without its
record, and each ask costs an engine's start (seconds: the worker imports torch). With
--sample, a list of kernels read by hand and the transforms that should apply to each: per
transform, on how many of those it should, and on how many of those it does.

    python experiments/transforms/coverage.py TFORGE DIR... [--sample FILE] [--out TSV]
        [--jobs N] [--cache FILE] [--analyzer ANALYZE_PY]

The DIRs are checkouts read elsewhere, never committed: coverage_sample.txt names FlagGems'
src/flag_gems/ops and fused copied into a folder `flaggems`, and flash-linear-attention's fla/ops
into one named `fla`. The sample file has one kernel a line, `PATH KERNEL [ID,...]` (PATH from a
DIR's parent, as `flaggems/ops/x.py`; the IDs the transforms that should apply, none: `-`),
`#` comments. --out writes one line a
kernel: path, kernel, the transforms that apply (or `error: ...`). Nothing is run or imported:
the files are parsed (to find their jit functions) and analysed; a few seconds a kernel.
--cache FILE keeps each answer under a digest of what decides it (the file, the kernel, its
analysis by the ANALYZER the engine runs, default the one of the tree TFORGE was built from,
and the transform plugins' sources there), so a second run after a change asks the engine only
about the kernels whose analysis changed.
"""
import argparse
import ast
import collections
import concurrent.futures
import functools
import glob
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys


def is_jit(decorator):
    """Whether a decorator is Triton's jit (`triton.jit`, `jit`, called with options or not)."""
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "jit"


def entry_kernels(path):
    """The jit functions of the file that no other jit function of it calls."""
    try:
        tree = ast.parse(open(path, "rb").read(), filename=path)
    except (SyntaxError, ValueError):
        return []
    jit = [f for f in ast.walk(tree)
           if isinstance(f, ast.FunctionDef) and any(is_jit(d) for d in f.decorator_list)]
    names = {f.name for f in jit}
    called = set()
    for f in jit:
        for node in ast.walk(f):
            if isinstance(node, ast.Call):
                callee = node.func.attr if isinstance(node.func, ast.Attribute) else \
                    getattr(node.func, "id", "")
                if callee in names and callee != f.name:
                    called.add(callee)
    return [f.name for f in jit if f.name not in called]


def applies(tforge, path, kernel):
    """The ids of the transforms `tforge transform` says apply, or a string: its error."""
    r = subprocess.run([tforge, "transform", path, "--kernel", kernel], capture_output=True,
                       text=True)
    if r.returncode:
        return (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    return sorted(set(re.findall(r"^  (\w+): ", r.stdout, re.M)))


def load_analyzer(path):
    """The analysis module at `path`, alone (it needs nothing but the standard library)."""
    spec = importlib.util.spec_from_file_location("tforge_analyze", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The rewrites counted, and the analysis' record each one's create refuses to apply without
REWRITES = ("descriptors", "exp2", "groupm", "masksplit", "persistent", "scalefold", "splitk")


def may_rewrite(k):
    """Whether the kernel's analysis holds a record one of REWRITES needs: masksplit's
    loop_tails, scalefold's scale_folds, the gemm of splitk, persistent and descriptors, groupm's
    tile_map over a dot, an exp for exp2."""
    return bool(k["loop_tails"] or k["scale_folds"] or k["gemm"] or
                (k["tile_map"] and k["dots"]) or any(m["op"] == "exp" for m in k["math"]))


@functools.lru_cache(maxsize=None)
def analysis(analyzer, path):
    """The file's analysis as (its JSON text, the document), or None where it fails here."""
    try:
        doc = analyzer.analyze(path)
    except Exception:  # the engine will say what failed; nothing to key it by
        return None
    return json.dumps(doc, sort_keys=True), doc


def digest(analyzer, plugins, path, kernel):
    """(what decides the transforms' answer for the kernel, as a digest: the file's whole
    analysis, which holds the kernel's; whether one of REWRITES may apply), or (None, True)
    when the analysis fails here."""
    found = analysis(analyzer, path)
    if found is None:
        return None, True
    ir, doc = found
    h = hashlib.sha256(plugins)
    for part in (open(path, "rb").read(), kernel.encode(), ir.encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest(), any(may_rewrite(k) for k in doc["kernels"] if k["name"] == kernel)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tforge")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--sample")
    ap.add_argument("--out")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache")
    ap.add_argument("--analyzer")
    args = ap.parse_args()
    tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(args.tforge))))
    analyzer = load_analyzer(args.analyzer or os.path.join(
        tree, "engine/worker/python/tforge_worker/analyze.py"))
    plugins = hashlib.sha256()  # their sources: builds of the same source differ in bytes
    for source in sorted(glob.glob(os.path.join(tree, "plugins/transforms/*/*.c")) +
                         glob.glob(os.path.join(tree, "sdk/**/*.[ch]"), recursive=True) +
                         glob.glob(os.path.join(tree, "include/tforge/plugin/*.h"))):
        plugins.update(open(source, "rb").read())
    plugins = plugins.digest()
    cache = {}
    if args.cache and os.path.exists(args.cache):
        cache = json.load(open(args.cache))
    kernels = []  # (path, the path shown, kernel)
    for root in args.dirs:
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if name.endswith(".py") and b"jit" in open(path, "rb").read():
                    rel = os.path.relpath(path, os.path.dirname(root.rstrip("/")))
                    kernels += [(path, rel, k) for k in entry_kernels(path)]
    def answer(t):
        key, asked = digest(analyzer, plugins, t[0], t[2])
        if not asked:
            return []  # none of REWRITES can apply: not worth an engine's start
        if key is None:
            return applies(args.tforge, t[0], t[2])
        if key not in cache:
            cache[key] = applies(args.tforge, t[0], t[2])
        return cache[key]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        found = list(pool.map(answer, kernels))
    if args.cache:
        json.dump(cache, open(args.cache, "w"))
    result = {(rel, k): f for (_, rel, k), f in zip(kernels, found)}
    if args.out:
        with open(args.out, "w") as out:
            for (rel, k), f in result.items():
                text = ",".join(f) if isinstance(f, list) else "error: " + f
                out.write(f"{rel}\t{k}\t{text}\n")
    counts = collections.Counter(t for f in found if isinstance(f, list) for t in f
                                 if t in REWRITES)
    errors = sum(not isinstance(f, list) for f in found)
    print(f"{len(kernels)} kernels in {len({r for _, r, _ in kernels})} files, "
          f"{errors} not analysed")
    for t in REWRITES:
        print(f"  {t:12} applies to {counts[t]}")
    if not args.sample:
        return
    should, agree = collections.Counter(), collections.Counter()
    extra = collections.Counter()
    for line in open(args.sample):
        line = line.split("#")[0].split()
        if not line:
            continue
        rel, kernel, ids = line[0], line[1], line[2] if len(line) > 2 else "-"
        if (rel, kernel) not in result:
            sys.exit(f"{args.sample}: {rel} {kernel}: no such entry kernel under the folders")
        want = set() if ids == "-" else set(ids.split(","))
        got = result[(rel, kernel)]
        got = set(got) if isinstance(got, list) else set()
        got &= set(REWRITES)
        for t in want:
            should[t] += 1
            agree[t] += t in got
        for t in got - want:
            extra[t] += 1
    print("sample: transform, should apply, does among those, applies where it should not")
    for t in sorted(set(should) | set(extra)):
        print(f"  {t:12} {should[t]:3} {agree[t]:3} {extra[t]:3}")


if __name__ == "__main__":
    main()
