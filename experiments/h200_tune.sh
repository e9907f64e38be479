#!/usr/bin/env bash
# Issue 4's measurements on a GPU machine, in one call: build the engine there (carry .deps, see
# the device notes in experiments/README.md), run the gpu-labelled tests, tune every example on
# the GPU, compare the compile pool with one worker, our timing with do_bench, and a run of 60
# candidates with planted faults. Usage: experiments/h200_tune.sh OUT_DIR
set -u
out=$1
mkdir -p "$out/tune"
export TRITON_CACHE_DIR=/tmp/triton-cache
eval "$(bash .deps/unpack-debs.sh .deps /tmp/deps)"
{ cmake -S . -B /tmp/b -DPython3_EXECUTABLE="$(command -v python3)" &&
  cmake --build /tmp/b -j "$(nproc)"; } > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t=/tmp/b/bin/tforge
(cd /tmp/b && ctest -L gpu --output-on-failure) > "$out/gpu_tests.log" 2>&1
tail -3 "$out/gpu_tests.log" | tee "$out/summary.txt"
for k in vector_add softmax layer_norm rms_norm matmul attention conv2d rope; do
  timeout 300 "$t" tune "experiments/kernels/$k/task.json" --backend cuda \
    --strategy "${STRATEGY:-random}" --budget "${BUDGET:-40}" --out "$out/tune/$k" -q --json \
    > "$out/tune/$k.json" 2> "$out/tune/$k.err"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:11} baseline {r['baseline'].get('ms', float('nan')):.4f} ms  best {r['best'].get('ms', float('nan')):.4f} ms  {r.get('speedup', float('nan')):.2f}x  {r['evaluations']} evals {r['seconds']:.0f} s\")" \
    "$out/tune/$k.json" "$k" 2>&1 | tee -a "$out/summary.txt"
done
for w in 1 16; do  # the same 48 matmul candidates, a cold Triton cache each time
  rm -rf /tmp/triton-cache-pool
  TRITON_CACHE_DIR=/tmp/triton-cache-pool "$t" tune experiments/kernels/matmul/task.json \
    --backend compile --budget 48 --batch 48 --compile-workers "$w" --out "$out/pool$w" -q --json \
    > "$out/pool$w.json" 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(f'compile pool, {sys.argv[2]:>2} workers: {r[\"evaluations\"]} candidates in {r[\"seconds\"]:.1f} s')" \
    "$out/pool$w.json" "$w" | tee -a "$out/summary.txt"
done
python3 experiments/compare_do_bench.py experiments/kernels/matmul/task.json \
  --config '{"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,"GROUP_M":8,"num_warps":8,"num_stages":3}' \
  --config '{"BLOCK_M":32,"BLOCK_N":32,"BLOCK_K":32,"GROUP_M":1,"num_warps":4,"num_stages":1}' \
  2>&1 | tee -a "$out/summary.txt"
timeout 900 "$t" tune tests/fixtures/tasks/faulty/task_gpu.json --backend cuda --strategy exhaustive \
  --budget 60 --timeout 20 --out "$out/faulty" -q --json > "$out/faulty.json" 2> "$out/faulty.err"
python3 -c "import json,sys,collections; r=json.load(open(sys.argv[1])); print('planted faults:', r['evaluations'], 'evaluations', dict(collections.Counter(h['status'] for h in r['history'])), 'workers replaced', r['workers_replaced'])" \
  "$out/faulty.json" 2>&1 | tee -a "$out/summary.txt"
tar -C "$out" -czf "$out/runs.tar.gz" tune faulty pool1 pool16 2>/dev/null
rm -rf "$out/tune" "$out/faulty" "$out/pool1" "$out/pool16"
