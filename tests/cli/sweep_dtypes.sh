#!/usr/bin/env bash
# A sweep manifest's `dtypes`: tasks x shapes x dtypes. A dtype the task does not list, dtypes for
# a task that declares none and a malformed list are refused before any tune, naming the manifest,
# the entry and the field (exit 2); a run over float32 and float16 of a task whose float16 inputs
# fail its check gives one result per (task, shape, dtype), each in its own folder, the failure
# the float16 one's alone.
# usage: sweep_dtypes.sh TFORGE SOURCE_DIR
set -u
tforge=$1 src=$2
. "$(dirname "$0")/../support/preamble.sh"
task=$src/tests/fixtures/tasks/dtypes/task.json
plain=$src/experiments/kernels/vector_add/task.json
defaults='"defaults": {"backend": "interpret", "budget": 1, "transforms": "none",
  "compile_workers": 1, "strategy": "random"}'

# refused NAME PATTERN TASKS: the manifest is refused, exit 2, naming its file, entry and field
refused() {
  printf '{%s, "tasks": %s}' "$defaults" "$3" > "$work/$1.json"
  "$tforge" sweep "$work/$1.json" --out "$work/never" -q > "$work/out.txt" 2>&1
  local rc=$?
  if [ "$rc" -eq 2 ] && grep -Eq -- "$work/$1.json: $2" "$work/out.txt" && [ ! -e "$work/never" ]
  then ok; else bad "manifest $1 -> exit $rc, want 2 naming '$2'"; cat "$work/out.txt"; fi
}
refused notallowed "tasks\[1\]\.dtypes\[1\]: expected one of $task's dtypes \(float32, float16\), not listed before, got bfloat16" \
  '[{"task": "'$plain'", "shapes": [0]}, {"task": "'$task'", "shapes": [0], "dtypes": ["float16", "bfloat16"]}]'
refused twice "tasks\[0\]\.dtypes\[1\]: expected one of .* not listed before, got float16" \
  '[{"task": "'$task'", "shapes": [0], "dtypes": ["float16", "float16"]}]'
refused nodtypes "tasks\[0\]\.dtypes\[0\]: expected no dtypes: $plain declares none" \
  '[{"task": "'$plain'", "shapes": [0], "dtypes": ["float16"]}]'
refused notalist 'tasks\[0\]\.dtypes: expected a list of the task.s dtypes' \
  '[{"task": "'$task'", "shapes": [0], "dtypes": "float16"}]'

printf '{%s, "tasks": [{"task": "%s", "shapes": [0], "dtypes": ["float32", "float16"]}]}' \
  "$defaults" "$task" > "$work/sweep.json"
"$tforge" sweep "$work/sweep.json" --out "$work/out" -q > "$work/out.txt" 2>&1
rc=$?
# the entries of sweep.json as "dtype status result" lines, and each result's dtype
summary=$(python3 - "$work/out" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1] + "/sweep.json"))["entries"]:
    r = json.load(open(f"{sys.argv[1]}/{e['result']}"))
    print(e["dtype"], e["status"], e["result"], r["dtype"])
PY
)
want="float32 done dtypes/shape-0-float32/result.json float32
float16 failed dtypes/shape-0-float16/result.json float16"
if [ "$rc" -eq 1 ] && [ "$summary" = "$want" ]; then ok
else bad "the sweep over two dtypes -> exit $rc:"; echo "$summary"; cat "$work/out.txt"; fi

finish "sweep_dtypes"
