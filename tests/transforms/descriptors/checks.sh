#!/usr/bin/env bash
# What the cases cannot say, in Triton's interpreter (or on the GPU when there is one): the
# descriptors variant refuses a launch TMA cannot address (rows of 82 bytes; batches 1921 halves
# apart) with a clear error and no result, where the file's own kernel passes; descriptors and persistent compose with each
# other and with pipeline (every program looping over tiles through descriptors; C stored in
# halves too), through the task's grid and through the file's own autotuned wrapper.
# usage: checks.sh TFORGE ROOT  (run by tests/cli/transform.sh)
set -u
tforge=$1
cd "$2" || exit 1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
failures=0
expect() { # expect STATUS PATTERN TASK [ARGS...]
  local want=$1 pattern=$2
  shift 2
  "$tforge" check "$@" >"$tmp" 2>&1
  local got=$?
  if [ "$got" != "$want" ] || ! grep -Eq -- "$pattern" "$tmp"; then
    echo "FAIL: tforge check $* exited $got (want $want, output matching '$pattern'): $(tail -3 "$tmp")"
    failures=$((failures + 1))
  fi
}
unaligned=tests/transforms/descriptors/matmul_unaligned.json
expect 0 ": ok" "$unaligned"
expect 1 "ValueError: TMA needs b_ptr 16-byte aligned, its row stride \(41 x 2 bytes\)" \
  "$unaligned" --transforms descriptors --set tma=True
# a batch stride of M * K + 1 halves: rows aligned, the second batch's base not
batched=tests/transforms/descriptors/gemm_batched_unaligned.json
expect 0 ": ok" "$batched"
expect 1 "ValueError: TMA needs a's batch stride 16-byte aligned \(1921 x 2 bytes\)" "$batched" \
  --transforms descriptors --set tma=True
expect 0 ": ok" tests/transforms/persistent/matmul_many_tiles.json \
  --transforms descriptors,persistent,pipeline --set tma=True --set persistent_programs=132 \
  --set persistent_flatten=True --set loop0_stages=3
expect 0 ": ok" tests/transforms/persistent/gemm_autotune.json --transforms descriptors,persistent \
  --set tma=True --set persistent_programs=132
expect 0 ": ok" tests/transforms/persistent/matmul_many_tiles.json --transforms descriptors,persistent \
  --set tma=True --set tma_subtile=True --set persistent_programs=132
echo "descriptors checks: $failures failed"
[ "$failures" = 0 ]
