#!/usr/bin/env bash
# Does a change leave the search's behaviour alone? Runs `tforge replay --json` of every shipped
# strategy on every recorded space (ours in data/h200, the community's in ../shared/data/ktcache)
# with two builds and compares the documents (scores, traces, charged times, medians), ignoring
# wall time and what only the newer build reports.
# Usage: experiments/replay_identity.sh TFORGE_BEFORE TFORGE_AFTER [OUT_DIR]
# (a build of the previous commit: git worktree add /tmp/before HEAD~1 && build it there)
set -u
before=$1 after=$2 out=${3:-$(mktemp -d)}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for side in before after; do
  t=${!side}
  mkdir -p "$out/$side"
  for f in "$src"/data/h200/*.json.gz "$src"/../shared/data/ktcache/*.json.gz; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .json.gz)
    case $n in convolution*|dedispersion*) seeds=3 budget=40 ;; *) seeds=5 budget=30 ;; esac
    for s in random exhaustive annealing genetic coordinate pattern bo; do
      "$t" replay --cache "$f" --strategy $s --seeds $seeds --budget $budget --json -q \
        > "$out/$side/$n.$s.json"
    done
    "$t" replay --cache "$f" --strategy bo,annealing --seeds 2 --budget 20 --batch 4 --noise \
      --json -q > "$out/$side/$n.batch_noise.json"
  done
done
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def load(path):
    d = json.load(open(path))
    d["cache"] = os.path.basename(d["cache"])
    for k in ("objective", "higher_is_better"):
        d.pop(k, None)
    for s in d["strategies"]:
        for k in ("seconds", "version", "options"):
            s.pop(k, None)
    return d
files = sorted(glob.glob(f"{out}/before/*.json"))
differ = [os.path.basename(f) for f in files if load(f) != load(f.replace("/before/", "/after/"))]
for name in differ:
    print("differs:", name)
print(f"replay identity: {len(files) - len(differ)} passed, {len(differ)} failed")
PY
