#!/usr/bin/env bash
# `tforge dispatch` end to end on SYNTHETIC recordings (fixtures/dispatch/synthetic.py: times
# from an analytic model of a softmax, not from a GPU) at the ten shapes of its task: each shape
# tuned on the replay backend (exhaustively: its own winner is its optimum), the dispatch fitted
# with shapes 4 and 5 held out, then imported by a pytest in a fresh process (dispatch_user.py:
# choices within 5% of each shape's own winner, the autotune list on the task's kernel). The
# results are read as a plain list of result.json files and as a sweep's folder; bad input exits
# 2 naming the file and field. Then on the H200 recordings of matmul at its two recorded shapes,
# each held out in turn.
# usage: dispatch.sh TFORGE PYTHON SOURCE_DIR
set -u
tforge=$1 python=$2 src=$3
. "$(dirname "$0")/../support/preamble.sh"
fixture=$src/tests/fixtures/dispatch
task=$fixture/task.json

"$python" "$fixture/synthetic.py" "$task" "$work/rec" || bad "synthetic recordings"
for i in 0 1 2 3 4 5 6 7 8 9; do
  "$tforge" tune "$task" --shape $i --backend "replay:$work/rec/softmax_${i}_synthetic.json.gz" \
    --strategy exhaustive --budget 200 --out "$work/res/shape-$i" -q > "$work/tune$i.txt" 2>&1 ||
    { bad "tune shape $i"; cat "$work/tune$i.txt"; }
done
# result.json says which shape it tuned and the recording it replayed
if json "$work/res/shape-3/result.json" 'r["shape"] == {"index": 3, "values": {"M": 4096, "N": 2048}} and r["recording"].endswith("softmax_3_synthetic.json.gz")'
then ok; else bad "result.json's shape and recording"; fi

mkdir -p "$work/out"
# a plain list of result.json files
if "$tforge" dispatch "$work"/res/shape-*/result.json --holdout-shapes 4,5 \
     --out "$work/out/softmax_dispatch.py" > "$work/dispatch.txt" 2>&1 &&
   grep -q '| 4 | M=4096 N=4096 | held out |' "$work/dispatch.txt" &&
   grep -q 'held out |' "$work/out/softmax_dispatch.py"; then ok
else bad "dispatch of result.json files"; cat "$work/dispatch.txt"; fi
if DISPATCH_FILE="$work/out/softmax_dispatch.py" DISPATCH_RESULTS="$work/res" DISPATCH_HELD_OUT=4,5 \
   TRITON_INTERPRET=1 "$python" -m pytest "$src/tests/cli/dispatch_user.py" -q -p no:cacheprovider \
     > "$work/user.txt" 2>&1; then ok; else bad "the dispatch file as the user runs it"; cat "$work/user.txt"; fi

# the H200 recordings of matmul at two shapes (data/h200): each one's choice, fitted on the
# other alone, within 5% of its own winner
for i in 0 2; do
  "$tforge" tune "$src/experiments/kernels/matmul/task.json" --shape $i \
    --backend "replay:$src/data/h200/matmul_${i}_H200.json.gz" --strategy exhaustive \
    --budget 1000 --out "$work/mm/shape-$i" -q > "$work/mm$i.txt" 2>&1 ||
    { bad "tune matmul shape $i"; cat "$work/mm$i.txt"; }
done
for held in 0 2; do
  if "$tforge" dispatch "$work/mm/shape-0/result.json" "$work/mm/shape-2/result.json" \
       --holdout-shapes $held --out "$work/out/mm$held.py" > "$work/mm_dispatch.txt" 2>&1 &&
     DISPATCH_FILE="$work/out/mm$held.py" DISPATCH_RESULTS="$work/mm" DISPATCH_HELD_OUT=$held \
     DISPATCH_CONFIGS_AT_LEAST=1 TRITON_INTERPRET=1 "$python" -m pytest \
       "$src/tests/cli/dispatch_user.py" -k choice -q -p no:cacheprovider > "$work/mm_user.txt" 2>&1
  then ok; else bad "matmul, shape $held held out"; cat "$work/mm_dispatch.txt" "$work/mm_user.txt"; fi
done

# a sweep's folder: sweep.json lists (task, shape, values, status, result) of each
"$python" - "$work/res" "$task" <<'PY'
import json, os, sys
res, task = sys.argv[1], sys.argv[2]
shapes = json.load(open(task))["shapes"]["tune"]
entries = [{"task": task, "shape": i, "values": s, "status": "done",
            "result": f"shape-{i}/result.json"} for i, s in enumerate(shapes)]
json.dump({"entries": entries}, open(os.path.join(res, "sweep.json"), "w"))
PY
if "$tforge" dispatch "$work/res" --holdout 2 --out "$work/out/sweep_dispatch.py" --json \
     > "$work/sweep.json" 2>&1 &&
   json "$work/sweep.json" 'r["shapes"] == 10 and r["held_out"] == 2 and r["leaves"] >= 2'
then ok; else bad "dispatch of a sweep's folder"; cat "$work/sweep.json"; fi

# bad input: exit 2 naming the file and the field
mkdir -p "$work/empty" "$work/bad"
expect2() { # NAME PATTERN ARGS...: exit 2 with PATTERN in the message
  local name=$1 pattern=$2; shift 2
  "$tforge" dispatch "$@" --out "$work/bad/x.py" > "$work/bad.txt" 2>&1
  local rc=$?
  if [ $rc = 2 ] && grep -q -- "$pattern" "$work/bad.txt"; then ok
  else bad "$name (exit $rc): $(cat "$work/bad.txt")"; fi
}
expect2 "no results" "$work/empty: expected a results folder" "$work/empty"
"$python" -c "import json, sys; r = json.load(open(sys.argv[1])); r['task'] = '/elsewhere/task.json'
json.dump(r, open(sys.argv[2], 'w'))" "$work/res/shape-1/result.json" "$work/bad/other_task.json"
expect2 "two tasks" "other_task.json: task: expected the task of the other results" \
  "$work/res/shape-0/result.json" "$work/bad/other_task.json"
"$python" -c "import json, sys; r = json.load(open(sys.argv[1])); del r['shape']['values']['N']
json.dump(r, open(sys.argv[2], 'w'))" "$work/res/shape-1/result.json" "$work/bad/no_n.json"
expect2 "a missing shape symbol" "no_n.json: shape.values.N: expected the size" \
  "$work/res/shape-0/result.json" "$work/bad/no_n.json"
"$python" -c "import json, sys; r = json.load(open(sys.argv[1])); del r['shape']
json.dump(r, open(sys.argv[2], 'w'))" "$work/res/shape-1/result.json" "$work/bad/no_shape.json"
expect2 "no shape" "no_shape.json: shape: expected the tuned shape" "$work/bad/no_shape.json"
expect2 "a held-out shape not read" "holdout-shapes: shape 12" "$work"/res/shape-*/result.json \
  --holdout-shapes 12
expect2 "every shape held out" "--holdout 2: expected fewer" "$work/res/shape-0/result.json" \
  "$work/res/shape-1/result.json" --holdout 2

finish "dispatch"
