#!/usr/bin/env bash
# The exit statuses the README promises, for tasks that are bad input in ways only running them
# showed before: `check` (and `tune` for the launch) exits 2 naming the file and the field, where
# a kernel that fails at run time is the work failing (exit 1). The tasks are
# tests/fixtures/tasks/exit_codes/*.json, each a small variant of an interpreter task.
# usage: exit_codes.sh TFORGE SOURCE_DIR
set -u
tforge=$1 src=$2
tasks=$src/tests/fixtures/tasks/exit_codes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# expect STATUS NAME TEXT COMMAND...: the command exits STATUS and its output holds TEXT
expect() {
  local status=$1 name=$2 text=$3
  shift 3
  "$@" > "$work/$name.txt" 2>&1
  local rc=$?
  if [ "$rc" -eq "$status" ] && grep -qF -- "$text" "$work/$name.txt"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $name: expected exit $status and '$text', got exit $rc:"
    cat "$work/$name.txt"
    failed=$((failed + 1))
  fi
}
check() { # NAME STATUS TEXT: tforge check of fixture NAME says "FILE: TEXT"
  expect "$2" "check_$1" "$tasks/$1.json: $3" "$tforge" check "$tasks/$1.json"
}

# a launch expression whose value Triton cannot launch, a function given the wrong arguments
check grid_not_a_grid 2 "launch.grid: expected 1 to 3 block counts"
check call_arity 2 "launch.args: expected the arguments rows:add takes, got 1"
# a kernel that fails at run time is the work failing, not bad input
check kernel_fails 1 'baseline {"BLOCK":100,"num_warps":4,"num_stages":1} at {"N":1000}'
# sizes past int64, or inputs no memory holds
check check_shape_past_int64 2 \
  "shapes.check[0].N: expected an integer from 1 to 9223372036854775807 (int64)"
check check_shape_too_large 2 "shapes.check[0]: expected sizes whose inputs fit in the"
# half a UTF-16 pair is no text: refused at load, not an answer the engine cannot read
check lone_surrogate 2 \
  "description: expected text of Unicode characters, got a lone UTF-16 surrogate escape \\ud800"
# a space without a valid point: refused as tune refuses it
check no_valid_point 2 "space.constraints at shapes.tune[0]: space: no valid point"
check constraint_divides_by_zero 2 "space.constraints at shapes.tune[0]: space: no valid point"

# tune: the baseline's launch fails through the task's fault, so the run stops with exit 2
expect 2 tune_grid "$tasks/grid_not_a_grid.json: launch.grid: expected 1 to 3 block counts" \
  "$tforge" tune "$tasks/grid_not_a_grid.json" --backend interpret --budget 2 \
  --compile-workers 1 --out "$work/tune_grid" -q

echo "exit_codes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
