#!/usr/bin/env bash
# A baseline that leaves the space's parameters to a wrapper's own choices (`{}`) replays as the
# configuration that wrapper launches: the attention example over its H200 recording, and a
# fixture whose wrapper picks BLOCK from the size (tests/fixtures/tasks/wrapper_baseline, a
# SYNTHETIC recording); one whose launch needs real values is refused, naming the task.
# usage: replay_wrapper_baseline.sh TFORGE PYTHON SOURCE_DIR
set -u
tforge=$1 python=$2 src=$3
. "$(dirname "$0")/../support/preamble.sh"

# the attention wrapper's defaults: BLOCK_M 64, BLOCK_N 32, 4 warps, 1 stage
"$tforge" tune "$src/experiments/kernels/attention/task.json" \
  --backend "replay:$src/data/h200/attention_0_H200.json.gz" --budget 3 --compile-workers 1 \
  --out "$work/attention" -q > "$work/attention.txt" 2>&1
rc=$?
recorded=$("$python" -c "import gzip, json, sys
print(json.load(gzip.open(sys.argv[1], 'rt'))['cache']['64,32,4,1']['time'])" \
  "$src/data/h200/attention_0_H200.json.gz")
if [ $rc = 0 ] && json "$work/attention/result.json" "r['baseline']['config'] == {} and r['history'][0]['baseline'] and r['history'][0]['ms'] == $recorded"
then ok; else bad "the attention example replayed (exit $rc)"; cat "$work/attention.txt"; fi

# by_size's own choice at 1M elements is BLOCK 256, 2 warps, Triton's 3 stages: 0.30 ms
fixture=$src/tests/fixtures/tasks/wrapper_baseline
"$tforge" tune "$fixture/task.json" --backend "replay:$fixture/recording.json" \
  --strategy exhaustive --budget 8 --compile-workers 1 --out "$work/by_size" -q \
  > "$work/by_size.txt" 2>&1
rc=$?
if [ $rc = 0 ] && json "$work/by_size/result.json" "r['history'][0]['baseline'] and r['history'][0]['ms'] == 0.30 and r['best']['config'] == {'BLOCK': 256, 'num_warps': 4, 'num_stages': 1} and len(r['history']) == 8"
then ok; else bad "a wrapper's size-dependent defaults replayed (exit $rc)"; cat "$work/by_size.txt"; fi

"$tforge" tune "$fixture/task_by_value.json" --backend "replay:$fixture/recording.json" \
  --strategy exhaustive --budget 8 --compile-workers 1 --out "$work/by_value" -q \
  > "$work/by_value.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "the config {} leaves the recording's parameter BLOCK to the file's own launch, whose value the task's load could not tell .*: set it in the baseline of .*task_by_value.json" "$work/by_value.txt"
then ok; else bad "a launch that needs real values refused (exit $rc)"; cat "$work/by_value.txt"; fi

finish "replay wrapper baseline"
