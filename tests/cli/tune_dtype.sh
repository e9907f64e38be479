#!/usr/bin/env bash
# `tune --dtype` in the interpreter on a task whose inputs are declared float16 and whose `dtypes`
# are float32 (its first, the default) and float16, checked against float64 within float32's
# tolerances: the default run passes (its inputs float32) and says float32 in result.json;
# --dtype float16 makes the inputs float16, which that check fails;
# a dtype the task does not list, --dtype on a task without dtypes and a --resume with another
# dtype are refused (exit 2) naming the option; --backend auto replays no shipped recording for a
# task with dtypes.
# usage: tune_dtype.sh TFORGE SOURCE_DIR
set -u
tforge=$1 src=$2
task=$src/tests/fixtures/tasks/dtypes/task.json
. "$(dirname "$0")/../support/preamble.sh"
tune() { "$tforge" tune "$@" --backend interpret --budget 2 --transforms none \
           --compile-workers 1 -q > "$work/out.txt" 2>&1; }
# dtype_of DIR: result.json's dtype
dtype_of() { sed -n 's/^[[:space:]]*"dtype":[[:space:]]*"\([a-z0-9]*\)".*/\1/p' "$1/result.json"; }

tune "$task" --out "$work/default"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(dtype_of "$work/default")" = float32 ]; then ok
else bad "the default dtype -> exit $rc, dtype '$(dtype_of "$work/default")'"; cat "$work/out.txt"; fi

tune "$task" --dtype float16 --out "$work/half"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(dtype_of "$work/half")" = float16 ] &&
   grep -q "wrong: out: .* outside atol=1e-06" "$work/out.txt"; then ok
else bad "--dtype float16 -> exit $rc, dtype '$(dtype_of "$work/half")'"; cat "$work/out.txt"; fi

# refused PATTERN ARGS...: exit 2 naming PATTERN
refused() {
  local pattern=$1; shift
  tune "$@"
  local rc=$?
  if [ "$rc" -eq 2 ] && grep -q -- "$pattern" "$work/out.txt"; then ok
  else bad "$* -> exit $rc, want 2 naming '$pattern'"; cat "$work/out.txt"; fi
}
refused "--dtype bfloat16: expected one of $task's dtypes (float32, float16)" \
  "$task" --dtype bfloat16 --out "$work/never"
refused "--dtype float16: .*vector_add/task.json declares no dtypes" \
  "$src/experiments/kernels/vector_add/task.json" --dtype float16 --out "$work/never"
refused "has dtype float32, this run asks for float16" \
  "$task" --dtype float16 --resume --out "$work/default"
[ ! -e "$work/never" ] || bad "a refused run wrote $work/never"

# --backend auto: the shipped recording of softmax's shape replayed for the task as it is, never
# for a copy that declares dtypes (the recording was made in the inputs' own)
cp -r "$src/experiments/kernels/softmax" "$work/softmax"
sed -i '0,/{/s//{"dtypes": ["float32"],/' "$work/softmax/task.json"
for copy in plain dtypes; do
  task_file=$src/experiments/kernels/softmax/task.json want=replay
  [ "$copy" = dtypes ] && task_file=$work/softmax/task.json want=interpret
  "$tforge" tune "$task_file" --budget 1 --transforms none --compile-workers 1 \
    --out "$work/auto-$copy" -q > "$work/out.txt" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && grep -q "\"backend\":[[:space:]]*\"$want\"" "$work/auto-$copy/result.json"
  then ok; else bad "--backend auto, softmax $copy -> exit $rc, want backend $want"
    cat "$work/out.txt"; fi
done

finish "tune_dtype"
