#!/usr/bin/env bash
# On a GPU (ctest label gpu; exit 77, skipped, without one): `tforge tune` defaults to forge on
# the cuda backend, profiles the baseline and each new incumbent (counters ok, or refused where
# the GPU forbids them), names the labels in report.md's Profile section and result.json; with
# the profiler refusing counters (refuse=1) the loop still runs on static metrics; patience ends
# a run early. usage: forge_gpu.sh TFORGE ROOT PYTHON
set -u
tforge=$1
cd "$2" || exit 1
python=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
task=experiments/kernels/softmax/task.json
# check ROUND EXPECTED_COUNTERS BUDGET [TUNE ARGS...]: tune, then read result.json
check() {
  round=$1 want=$2 budget=$3
  shift 3
  if ! "$tforge" tune "$task" --backend auto --transforms none --budget "$budget" \
      --out "$tmp/$round" "$@" >"$tmp/$round.log" 2>&1; then
    fail "tune $* exited non-zero: $(tail -3 "$tmp/$round.log")"
    return
  fi
  if grep -q "no GPU" "$tmp/$round.log"; then
    echo "skipped: no GPU"
    exit 77
  fi
  grep -q "^## Profile" "$tmp/$round/report.md" || fail "$round: report.md has no Profile section"
  "$python" - "$tmp/$round/result.json" "$want" <<'EOF' || fail "$round: $(cat "$tmp/why")"
import json, sys
r = json.load(open(sys.argv[1]))
want = sys.argv[2].split("|")
why = open(sys.argv[1].rsplit("/", 2)[0] + "/why", "w")
if r["strategy"] != "forge":
    why.write("strategy %s, not forge" % r["strategy"]); sys.exit(1)
profiles = r.get("profile", {}).get("profiles", [])
if not profiles or not profiles[0]["baseline"]:
    why.write("the baseline was not profiled first"); sys.exit(1)
for p in profiles:
    if p["profile"]["counters"] not in want:
        why.write("counters %s, expected %s" % (p["profile"]["counters"], want)); sys.exit(1)
    if "registers" not in p["profile"]["metrics"]:
        why.write("no static metrics in a profile"); sys.exit(1)
print("%s: %d profiles, counters %s, labels %s" % (sys.argv[2], len(profiles),
      profiles[0]["profile"]["counters"], [l["label"] for p in profiles for l in p["labels"]]))
EOF
}
check default "ok|refused" 8
check refused "refused" 8 --profiler-option refuse=1
check static "none" 8 --no-counters
# patience: at most 2 candidates after the last new incumbent
check patience "ok|refused" 40 --patience 2
"$python" - "$tmp/patience/result.json" <<'EOF' || fail "patience did not end the run early"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["evaluations"] < 41 else 1)
EOF
echo "forge on the GPU: $failures failed"
[ "$failures" = 0 ]
