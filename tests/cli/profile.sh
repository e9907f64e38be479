#!/usr/bin/env bash
# `tforge profile` end to end on the vector add example.
#   cpu: without a GPU (CUDA_VISIBLE_DEVICES hidden): the interpreter backend, the static metrics
#        (grid and warps as launched, occupancy by the H200's rules, the task's bytes), counters
#        "none" with a note, the heuristic's labels when its plugin is built; bad input exits 2.
#   gpu: the cuda backend with the cupti profiler: counters "ok" (throughput, occupancy,
#        kernel_ms; the full set's stalls), and with refuse=1 counters "refused" with the reason
#        while the static metrics are still there. Exits 77 (skipped) without a GPU.
# usage: profile.sh TFORGE PYTHON ROOT cpu|gpu
set -u
tforge=$1 python=$2 root=$3 mode=$4
task=$root/experiments/kernels/vector_add/task.json
failures=0 passed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$mode" = cpu ] && export CUDA_VISIBLE_DEVICES=

check() { # check OK MESSAGE
  if [ "$1" = 0 ]; then passed=$((passed + 1)); else echo "FAIL: $2"; failures=$((failures + 1)); fi
}

# expect FILE PYTHON-EXPRESSION: true of the JSON document `d` in FILE
expect() {
  "$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
  check $? "$2 is false of $(cat "$1")"
}

# shape 1 is N = 16777216
"$tforge" profile "$task" --shape 1 --set BLOCK=1024 --set num_warps=8 --json >"$tmp/p.json" \
  2>"$tmp/err"
check $? "profile --json exited non-zero: $(cat "$tmp/err")"
s='d["static"]' c='d["counter_metrics"]'
if [ "$mode" = cpu ]; then
  expect "$tmp/p.json" 'd["backend"] == "interpret" and d["status"] == "ok"'
  expect "$tmp/p.json" 'd["counters"] == "none" and "no GPU" in d["note"] and '"$c"' == {}'
  # 16384 blocks of 8 warps; 20-odd registers: 8 blocks of 256 threads fill the 64 warps of an
  # H200 SM, so warps limit (3); 16384 / (8 * 132) = 15.5 waves
  expect "$tmp/p.json" "$s"'["grid_blocks"] == 16384 and '"$s"'["num_warps"] == 8'
  expect "$tmp/p.json" "$s"'["occupancy_theoretical"] == 1 and '"$s"'["occupancy_limiter"] == 3'
  expect "$tmp/p.json" 'abs('"$s"'["waves"] - 16384 / (8 * 132)) < 1e-9'
  expect "$tmp/p.json" "$s"'["bytes"] == 3 * 4 * 16777216 and "registers" in '"$s"
  expect "$tmp/p.json" '"time_ms" not in '"$s"  # the interpreter times nothing
  if "$tforge" plugins | grep -q "bottleneck"; then
    expect "$tmp/p.json" 'd["heuristic"] == "bottleneck"'
  else
    expect "$tmp/p.json" 'd["heuristic"] is None and "bottleneck" in d["heuristic_note"]'
  fi
  "$tforge" profile "$task" --shape 1 >"$tmp/text" 2>&1
  grep -q "static metrics:" "$tmp/text" && grep -q "counters: none: no GPU" "$tmp/text" &&
    grep -q "occupancy_theoretical" "$tmp/text"
  check $? "the text report lacks its sections: $(cat "$tmp/text")"
  for bad in "--set BLOCK=3" "--set NOPE=1" "--shape 7" "--heuristic nosuch"; do
    # shellcheck disable=SC2086
    "$tforge" profile "$task" $bad >"$tmp/out" 2>&1
    rc=$?
    [ $rc = 2 ]
    check $? "profile $bad: exit $rc, expected 2: $(cat "$tmp/out")"
  done
else
  if "$python" -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["backend"] != "interpret")' "$tmp/p.json" 2>/dev/null; then
    echo "skipped: no GPU (the interpreter ran it)"
    exit 77
  fi
  expect "$tmp/p.json" 'd["backend"] == "cuda" and d["status"] == "ok" and d["counters"] == "ok"'
  for m in sm_pct dram_pct l2_pct occupancy_achieved issue_pct kernel_ms; do
    expect "$tmp/p.json" '"'$m'" in '"$c"
  done
  # a 200 MB add is memory-bound: DRAM busy, the kernel's own time near the median
  expect "$tmp/p.json" "$c"'["dram_pct"] > 50 and 0 < '"$c"'["occupancy_achieved"] <= 1'
  expect "$tmp/p.json" '0.5 < '"$c"'["kernel_ms"] / '"$s"'["time_ms"] < 1.5'
  "$tforge" profile "$task" --shape 1 --profiler-option set=full --json >"$tmp/full.json" \
    2>"$tmp/err"
  check $? "profile set=full exited non-zero: $(cat "$tmp/err")"
  expect "$tmp/full.json" 'd["counters"] == "ok" and "stall_long_scoreboard" in '"$c"
  expect "$tmp/full.json" '"inst_memory" in '"$c"' and '"$c"'["l2_sectors_per_request"] > 0'
  expect "$tmp/full.json" '0.3 < sum(v for k, v in '"$c"'.items() if k.startswith("stall_")) <= 1.01'
  "$tforge" profile "$task" --shape 1 --profiler-option refuse=1 --json >"$tmp/refused.json" \
    2>"$tmp/err"
  check $? "profile refuse=1 exited non-zero: $(cat "$tmp/err")"
  expect "$tmp/refused.json" 'd["counters"] == "refused" and "INSUFFICIENT_PRIVILEGES" in d["note"]'
  expect "$tmp/refused.json" "$c"' == {} and "occupancy_theoretical" in '"$s"' and "time_ms" in '"$s"
  grep -q "counters refused" "$tmp/err"
  check $? "the refusal was not said: $(cat "$tmp/err")"
fi
echo "profile.sh ($mode): $passed passed, $failures failed"
[ "$failures" = 0 ]
