#!/usr/bin/env bash
# `tune --constraint`: more constraints over any dimension of the space, the transforms'
# parameters included. Every candidate (the baseline aside) keeps them, on a recording (knobs)
# and in the interpreter (a transform's launch option); a name no dimension has is exit 2 naming
# --constraint and the name; resuming with another constraint is refused naming the setting.
# usage: constraint.sh TFORGE SOURCE_DIR RECORDED_SPACE
set -u
tforge=$1 source=$2 space=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 passed=0
check() { # NAME CONDITION(python, over c: a candidate's config) -- tune args...
  local name=$1 cond=$2
  shift 3
  if ! "$tforge" tune "$@" --strategy exhaustive -q --json >"$work/$name.json" 2>"$work/err.txt"; then
    echo "FAIL: $name: tune failed"; cat "$work/err.txt"; failures=$((failures + 1)); return
  fi
  if python3 - "$work/$name.json" "$cond" <<'PY'; then passed=$((passed + 1)); else failures=$((failures + 1)); fi
import json, sys
history = json.load(open(sys.argv[1]))["history"][1:]  # the baseline is measured as it is
bad = [h["config"] for h in history if not eval(sys.argv[2], {"c": h["config"]})]
if not history or bad:
    sys.exit(f"FAIL: {sys.argv[1]}: {len(history)} candidates, breaking the constraint: {bad}")
PY
}
matmul=$source/experiments/kernels/matmul/task.json
check knobs 'c["BLOCK_M"] == 128 and c["num_stages"] < 3' -- "$matmul" --backend "replay:$space" \
  --budget 6 --out "$work/knobs" --constraint "BLOCK_M == 128" --constraint "num_stages < 3"
check transform 'c.get("maxnreg", 0) >= 128' -- "$source/experiments/kernels/vector_add/task.json" \
  --backend interpret --transforms launch --constraint "maxnreg >= 128" --budget 2 \
  --out "$work/transform"

"$tforge" tune "$matmul" --backend "replay:$space" --budget 1 --out "$work/bad" -q \
  --constraint "tile_m == 1" >/dev/null 2>"$work/err.txt"
rc=$?
if [ "$rc" -eq 2 ] && grep -q -- "--constraint: constraint 'tile_m == 1': .*unknown name 'tile_m'" "$work/err.txt"; then
  passed=$((passed + 1))
else
  echo "FAIL: an unknown name -> exit $rc (want 2)"; cat "$work/err.txt"; failures=$((failures + 1))
fi

"$tforge" tune "$matmul" --backend "replay:$space" --budget 6 --out "$work/knobs" -q --resume \
  --strategy exhaustive \
  --constraint "BLOCK_M == 64" >/dev/null 2>"$work/err.txt"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'has constraints \["BLOCK_M == 128","num_stages < 3"\], this run asks for \["BLOCK_M == 64"\]' "$work/err.txt"; then
  passed=$((passed + 1))
else
  echo "FAIL: --resume with another constraint -> exit $rc (want 2)"; cat "$work/err.txt"
  failures=$((failures + 1))
fi
echo "constraint: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
