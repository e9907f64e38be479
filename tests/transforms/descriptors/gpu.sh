#!/usr/bin/env bash
# On a GPU (exit 77, skipped, when tforge check runs the interpreter): the descriptors and
# persistent variants compile for the device (TMA descriptors made on the device, their scratch
# from the decorator's allocator) and pass at the check shape and at a tuning size, alone and
# composed; a launch TMA cannot address is refused before it runs (an error, never a fault or a
# wrong tile). Run by hand on the H200: bash tests/transforms/descriptors/gpu.sh build/bin/tforge .
# usage: gpu.sh TFORGE ROOT
set -u
tforge=$1
cd "$2" || exit 1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
failures=0
expect() { # expect STATUS TASK [ARGS...]
  local want=$1
  shift
  "$tforge" check "$@" >"$tmp" 2>&1
  local got=$?
  if grep -q "CPU interpreter" "$tmp"; then
    echo "skipped: no GPU (tforge check ran the interpreter)"
    exit 77
  fi
  if [ "$got" != "$want" ]; then
    echo "FAIL: tforge check $* exited $got, not $want: $(tail -3 "$tmp")"
    failures=$((failures + 1))
  fi
}
small=experiments/kernels/matmul/task.json
large=tests/transforms/descriptors/matmul_large.json
for task in $small $large tests/transforms/persistent/gemm_autotune.json; do
  expect 0 "$task" --transforms descriptors --set tma=True
  expect 0 "$task" --transforms descriptors --set tma=True --set tma_subtile=True
  expect 0 "$task" --transforms persistent --set persistent_programs=132
  expect 0 "$task" --transforms persistent --set persistent_programs=264 --set persistent_flatten=True
  expect 0 "$task" --transforms descriptors,persistent --set tma=True --set persistent_programs=132 \
    --set persistent_flatten=True
  expect 0 "$task" --transforms descriptors,persistent --set tma=True --set tma_subtile=True \
    --set persistent_programs=132
done
# the third-party spellings (issue 36's coverage fixtures) through their own wrappers
for task in gemm_epilogue gemm_batched gemm_loop_pointers gemm_peeled gemm_flags; do
  expect 0 tests/transforms/descriptors/$task.json --transforms descriptors --set tma=True
done
expect 1 tests/transforms/descriptors/matmul_unaligned.json --transforms descriptors --set tma=True
expect 0 tests/transforms/descriptors/matmul_unaligned.json
echo "descriptors and persistent on the GPU: $failures failed"
[ "$failures" = 0 ]
