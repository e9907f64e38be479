#!/usr/bin/env bash
# `tforge check` of a task whose own code never returns ends, bounded as tune bounds each phase:
# a reference, an inputs_fn or a launcher in `while True: pass` is killed at --timeout and named
# as the check phase (exit 1: the baseline did not pass); a kernel file that hangs while it is
# imported is named by the task's load (exit 2, as tune says it). Each within a short bound.
# usage: check_hang.sh TFORGE PYTHON ROOT
set -u
tforge=$1 python=$2 root=$3
failures=0 passed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUDA_VISIBLE_DEVICES=
LIMIT=45 # seconds: a phase's bound of 4 s, a worker's start and the task's imports

check() { # check OK MESSAGE
  if [ "$1" = 0 ]; then passed=$((passed + 1)); else echo "FAIL: $2"; failures=$((failures + 1)); fi
}

cp "$root/experiments/kernels/vector_add/kernel.py" "$tmp/kernel.py"
cat >"$tmp/hang.py" <<'EOF'
import torch


def reference(inputs):
    while True:
        pass


def inputs(shape, generator):
    while True:
        pass


def add(x, y):
    while True:
        pass
EOF
# task NAME PYTHON: the vector add task with PYTHON applied to its manifest `t`
task() {
  "$python" - "$root/experiments/kernels/vector_add/task.json" "$tmp/$1.json" "$2" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(t, open(sys.argv[2], "w"))
EOF
}
task reference 't["reference"] = "hang:reference"'
task inputs 'del t["inputs"]; t["inputs_fn"] = "hang:inputs"'
task launcher 't["launch"] = {"call": "hang:add", "args": ["x", "y"], "returns": "out", "grid": "(1,)"}; t["inputs"] = t["inputs"][:2]'

# expect NAME STATUS TEXT ARGS...: `tforge check` of task NAME exits STATUS within LIMIT seconds,
# saying TEXT
expect() {
  local name=$1 status=$2 text=$3
  shift 3
  local began=$SECONDS
  timeout $((LIMIT + 30)) "$tforge" check "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>&1
  local rc=$? took=$((SECONDS - began))
  [ "$rc" = "$status" ] && [ "$took" -lt "$LIMIT" ] && grep -q -- "$text" "$tmp/$name.out"
  check $? "check $name $*: exit $rc after $took s, expected $status within $LIMIT s saying '$text': $(cat "$tmp/$name.out")"
}

expect reference 1 "the check phase (inputs_fn, the reference and the kernel run once) timed out" \
  --timeout 4
expect inputs 1 "the check phase .* timed out: its worker gave no answer within 4000 ms" --timeout 4
expect launcher 1 "the check phase .* timed out" --timeout 4

# a kernel file that never finishes its import: the load's phase, the task's fault
cp "$tmp/kernel.py" "$tmp/slow_kernel.py"
cat >>"$tmp/slow_kernel.py" <<'EOF'


class Hang:
    while True:
        pass
EOF
task import 't["source"] = "slow_kernel.py"; t["reference"] = "slow_kernel:reference"'
expect import 2 "the worker loading it gave no answer within 4000 ms" --timeout 4

# the option is checked, and documented
for bad in 0 -1 x 86401; do
  "$tforge" check "$tmp/reference.json" --timeout "$bad" >"$tmp/bad.out" 2>&1
  rc=$?
  [ "$rc" = 2 ] && grep -q -- "--timeout expects seconds" "$tmp/bad.out"
  check $? "check --timeout $bad: exit $rc, expected 2: $(cat "$tmp/bad.out")"
done
"$tforge" check --help | grep -q -- "--timeout S"
check $? "check --help does not document --timeout"

echo "$passed passed, $failures failed"
[ "$failures" = 0 ]
