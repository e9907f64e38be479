#!/usr/bin/env bash
# `tune --dtype` in the interpreter on a task whose inputs are declared float16 and whose `dtypes`
# are float32 (its first, the default) and float16, checked against float64 within float32's
# tolerances: the default run passes (its inputs float32) and says float32 in result.json;
# --dtype float16 makes the inputs float16, which that check fails;
# a dtype the task does not list, --dtype on a task without dtypes and a --resume with another
# dtype are refused (exit 2) naming the option.
# usage: tune_dtype.sh TFORGE SOURCE_DIR
set -u
tforge=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
task=$src/tests/fixtures/tasks/dtypes/task.json
failures=0 passed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $1"; failures=$((failures + 1)); }
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

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
