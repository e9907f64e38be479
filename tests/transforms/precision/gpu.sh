#!/usr/bin/env bash
# On a GPU (ctest label gpu; exit 77, skipped, under the interpreter, which multiplies in fp32
# whatever input_precision says): the fp32 GEMM's baseline, which Triton multiplies in tf32,
# passes task.json and fails the tight task; its tf32x3 and ieee variants pass both. Measured on
# an H200 at the check shape: errors 0.053 (tf32), 1.1e-5 (tf32x3), 5.0e-5 (ieee).
# usage: gpu.sh TFORGE ROOT
set -u
tforge=$1
cd "$2" || exit 1
dir=tests/transforms/precision
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
failures=0
expect() { # expect STATUS TASK [ARGS...]
  want=$1
  shift
  "$tforge" check "$@" >"$tmp" 2>&1
  got=$?
  if grep -q "CPU interpreter" "$tmp"; then
    echo "skipped: no GPU (tforge check ran the interpreter)"
    exit 77
  fi
  if [ "$got" != "$want" ]; then
    echo "FAIL: tforge check $* exited $got, not $want: $(tail -3 "$tmp")"
    failures=$((failures + 1))
  fi
}
expect 0 "$dir/task.json"
expect 1 "$dir/task_tight.json"
for p in tf32x3 ieee; do
  expect 0 "$dir/task.json" --transforms precision --set dot0_precision=$p
  expect 0 "$dir/task_tight.json" --transforms precision --set dot0_precision=$p
done
echo "precision on the GPU: $failures failed"
[ "$failures" = 0 ]
