#!/usr/bin/env bash
# Issue 4's measurements on a GPU machine, in steps that fit one call each. The engine is built
# there first (incrementally in /tmp/b) from Debian packages carried in .deps: see
# experiments/README.md.
# Usage: experiments/h200_tune.sh OUT_DIR STEP...
#   gpu-tests        the ctest label gpu (GPU_TESTS_TIMEOUT seconds, default 300; GPU_TESTS_JOBS
#                    tests at once, default 1)
#   tune:K[,K...]    tune those examples on the GPU (STRATEGY, default bo; BUDGET, default 40;
#                    SEED, default 1)
#   pool             240 matmul candidates compiled by 1 and by 16 workers, each from a cold cache
#   do-bench         our timing of two matmul configs against triton.testing.do_bench
#   faults           50 candidates of the planted-fault task on the GPU
#   profile[:N,...]  issue 16: Nsight Compute's counters of the example kernels (or of those
#                    named, as ncu_reference.sh names them), then our profiler's (tforge
#                    profile) against them (experiments/profile/)
#   dram-prep        issue 16: the DRAM bytes each preparation of a pass leaves for the kernel
#                    (dram_preparation.py: ours; ncu's single pass after launch.py's preparations)
#   labels:K[,K...]  issue 16: `tforge profile` of K's baseline with the full counter set (stalls,
#                    instruction mix, coalescing): the metrics, labels and evidence
#   strategies:K[,K...] issue 16: tune K with forge, bo and rules (BUDGET, SEED, TIMEOUT: the
#                    candidate timeout in seconds), then the
#                    evaluations each needed to reach bo's best (compare_strategies.py)
#   record:K[,K...]  issue 16: K's whole knob space timed and profiled with counters (tune
#                    --strategy exhaustive --profile-all), exported as a recording,
#                    runs/K_counters_H200.json.gz, then forge, bo and rules replayed on it (50
#                    seeds, BUDGET; RECORD_TIMEOUT: seconds for the tune, default 500;
#                    RECORD_RESUME=DIR: go on from DIR/record_K/, a call's runs/ that ran out of
#                    time, carried back: matmul's 768 configurations take several calls);
#                    TASK_K=path records another task file under the name K; RECORD_TRANSFORMS
#                    (default none) and RECORD_CONSTRAINTS ("EXPR;EXPR": tune's --constraint)
#                    record a rewrite space, named runs/K_RECORD_NAME_GPU.json.gz; BATCH
#   timing           issue 16: our timing, do_bench and CUPTI's activity durations of the same
#                    launches under each protocol and its ablations (experiments/timing/)
#   capture:K[,K...] issue 14: `tforge capture` of experiments/capture/K_script.py, the captured
#                    baseline timed against the hand-written task's (interleaved), then tune
#                    the captured task (BUDGET)
#   transforms:K[,K...] issue 15: tune K with knobs alone (--transforms none) and with every
#                    source transform (BUDGET each), then time both winners, the baseline and
#                    torch's own op interleaved (experiments/transforms/compare.py); TASK_K=path
#                    tunes another task file under the name K; MODES="all" tunes with the
#                    transforms alone (the knobs' run carried in OUT_DIR/runs/K_none); the
#                    knobs' winner is timed twice, under two names (the spread left)
#   rewrites:K[,K...] issue 15, two stages: tune K's knobs alone, then the source transforms
#                    with the knobs pinned to that winner (experiments/transforms/pin.py), both
#                    BUDGET; then both winners and torch's op timed interleaved
#   lookahead:K[,K...] tune K with compile-ahead (the default) and with --no-lookahead, BUDGET
#                    (default 40) and SEED each, every transform: the seconds, the GPU's busy
#                    share after the first batch and the best time of each
#   suite[:N[,N...]] the realistic fixtures captured from experiments/suite/drive.py's entries
#                    (all, or those named) and tuned by experiments/suite/run.py (BUDGET, default
#                    50; TIME per task, default 2m; SEED; passed through): its table into the
#                    summary, its results in OUT_DIR/suite (at TIME=2m about three tasks fit a call)
#   vendor:K[,K...]  issue 36's targets: tune K with tune's defaults (BUDGET when set), then
#                    its best_variant.py in a fresh process through the file's entry point,
#                    timed against the file as it is and torch's own op, interleaved
#                    (experiments/suite/rerun.py)
#   energy:K[,K...]  issue 38: each K's baseline run back to back under the engine's energy
#                    observer (NVML's counter) while nvidia-smi samples power.draw every 50 ms,
#                    their agreement (experiments/energy/agreement.py); then the first K tuned
#                    with --objective latency and with --objective energy (BUDGET, default 16;
#                    SEED), each winner's config, ms and joules side by side
# Everything goes under OUT_DIR (logs, results as runs.tar.gz); summary.txt is printed last.
set -u
out=$1
shift
mkdir -p "$out/runs" "$out/capture"
export TRITON_CACHE_DIR=/tmp/triton-cache
. experiments/deps_env.sh
{ cmake -S . -B /tmp/b -DPython3_EXECUTABLE="$(command -v python3)" &&
  cmake --build /tmp/b -j "$(nproc)"; } > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t=/tmp/b/bin/tforge
summary=$out/summary.txt
line() { python3 - "$@" <<'EOF' 2>&1 | tee -a "$summary"
import json, sys, collections
path, kind, label = sys.argv[1:4]
try:
    r = json.load(open(path))
except Exception as e:
    sys.exit(f"{label}: no result ({e})")
if kind == "tune":
    print(f"{label:11} baseline {r['baseline'].get('ms', float('nan')):.4f} ms  best "
          f"{r['best'].get('ms', float('nan')):.4f} ms  {r.get('speedup', float('nan')):.2f}x  "
          f"{r['evaluations']} evals  {r['seconds']:.0f} s")
    sol = r.get("speed_of_light") or {}
    print(f"{'':11} speed of light: baseline {sol.get('baseline_percent', float('nan')):.0f}%  "
          f"winner {sol.get('winner_percent', float('nan')):.0f}%  ({sol.get('note')})")
elif kind == "pool":
    print(f"compile pool, {label:>2} workers: {r['evaluations']} candidates in {r['seconds']:.1f} s")
else:
    print("planted faults:", r["evaluations"], "evaluations",
          dict(collections.Counter(h["status"] for h in r["history"])),
          "workers replaced", r["workers_replaced"], f"{r['seconds']:.0f} s")
EOF
}
# torch's own op for an example, as compare.py takes it (nothing when there is none)
torch_op() {
  case $1 in
    matmul|skinny_gemm) echo "torch=torch.matmul(a, b)" ;;
    attention) echo "sdpa=F.scaled_dot_product_attention(q, k, v)" ;;
    attention_causal) echo "sdpa=F.scaled_dot_product_attention(Q, K, V, is_causal=True)" ;;
    softmax) echo "torch=torch.softmax(x, dim=-1)" ;;
    flash_causal) echo "sdpa=F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)" ;;
  esac
}
# the winner's rewrites, what each is worth, and the GPU's busy share, from a result document
winner() {
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); x=r.get('transforms') or {}; \
print('winner rewrites:', x.get('winner'), '| worth:', ['%s %.3fx' % (w['without'], \
w['without_ms'] / w['winner_ms']) if 'winner_ms' in w else w['without'] + ' ' + w['status'] \
for w in x.get('worth', [])], '| GPU busy:', r.get('runner_busy_after_first_batch'))" "$1" \
    2>&1 | tee -a "$summary"
}
for step in "$@"; do
  echo "== $step ($(date +%T))" >> "$summary"
  case $step in
  gpu-tests)
    (cd /tmp/b && timeout "${GPU_TESTS_TIMEOUT:-300}" ctest -L gpu -j "${GPU_TESTS_JOBS:-1}" --output-on-failure) > "$out/gpu_tests.log" 2>&1
    grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/gpu_tests.log" | tee -a "$summary" ;;
  capture:*)
    for k in $(echo "${step#capture:}" | tr , ' '); do
      timeout 300 "$t" capture --out "$out/capture/$k" -- python3 "experiments/capture/${k}_script.py" \
        > "$out/capture/$k.log" 2>&1
      tail -1 "$out/capture/$k.log" | tee -a "$summary"
      PYTHONPATH=engine/worker/python timeout 200 python3 experiments/capture/compare_baselines.py \
        "experiments/kernels/$k/task.json" "$out/capture/$k" 2>&1 | tee -a "$summary"
      task=$(PYTHONPATH=engine/worker/python python3 experiments/capture/compare_baselines.py \
        "experiments/kernels/$k/task.json" "$out/capture/$k" 1 2>/dev/null | sed -n 's/^captured task: //p')
      [ -n "$task" ] && timeout 240 "$t" tune "$task" --backend cuda --budget "${BUDGET:-40}" \
        --out "$out/runs/captured_$k" -q --json > "$out/runs/captured_$k.json" 2> "$out/runs/captured_$k.err"
      line "$out/runs/captured_$k.json" tune "captured $k"
    done ;;
  rewrites:*)
    for k in $(echo "${step#rewrites:}" | tr , ' '); do
      var="TASK_$k"; task=${!var:-experiments/kernels/$k/task.json}
      timeout 200 "$t" tune "$task" --backend cuda --transforms none --budget "${BUDGET:-40}" \
        --seed "${SEED:-1}" --out "$out/runs/${k}_knobs" -q --json \
        > "$out/runs/${k}_knobs.json" 2> "$out/runs/${k}_knobs.err"
      line "$out/runs/${k}_knobs.json" tune "$k knobs"
      pinned=${task%.json}_pinned.json
      python3 experiments/transforms/pin.py "$task" "$out/runs/${k}_knobs.json" "$pinned" || continue
      timeout 200 "$t" tune "$pinned" --backend cuda --transforms all --budget "${BUDGET:-40}" \
        --seed "${SEED:-1}" --out "$out/runs/${k}_rewrites" -q --json \
        > "$out/runs/${k}_rewrites.json" 2> "$out/runs/${k}_rewrites.err"
      line "$out/runs/${k}_rewrites.json" tune "$k rewrites"
      torch_op=$(torch_op "$k")
      PYTHONPATH=engine/worker/python timeout 200 python3 experiments/transforms/compare.py \
        "$task" --run "knobs=$out/runs/${k}_knobs" --run "rewrites=$out/runs/${k}_rewrites" \
        ${torch_op:+--torch "$torch_op"} 2>&1 | tail -6 | tee -a "$summary"
      winner "$out/runs/${k}_rewrites.json"
    done ;;
  transforms:*)
    for k in $(echo "${step#transforms:}" | tr , ' '); do
      var="TASK_$k"; task=${!var:-experiments/kernels/$k/task.json}
      for mode in ${MODES:-none all}; do
        timeout 200 "$t" tune "$task" --backend cuda --transforms "$mode" \
          --budget "${BUDGET:-40}" --seed "${SEED:-1}" --out "$out/runs/${k}_$mode" -q --json \
          > "$out/runs/${k}_$mode.json" 2> "$out/runs/${k}_$mode.err"
        line "$out/runs/${k}_$mode.json" tune "$k $mode"
      done
      torch_op=$(torch_op "$k")
      PYTHONPATH=engine/worker/python timeout 300 python3 experiments/transforms/compare.py \
        "$task" --run "knobs=$out/runs/${k}_none" --run "knobs_again=$out/runs/${k}_none" \
        --run "transforms=$out/runs/${k}_all" ${torch_op:+--torch "$torch_op"} 2>&1 | tail -7 \
        | tee -a "$summary"
      winner "$out/runs/${k}_all.json"
    done ;;
  lookahead:*)
    for k in $(echo "${step#lookahead:}" | tr , ' '); do
      for mode in ahead plain; do
        timeout 280 "$t" tune "experiments/kernels/$k/task.json" --backend cuda \
          --budget "${BUDGET:-40}" --seed "${SEED:-1}" --out "$out/runs/${k}_$mode" -q --json \
          $([ $mode = plain ] && echo --no-lookahead) \
          > "$out/runs/${k}_$mode.json" 2> "$out/runs/${k}_$mode.err"
        line "$out/runs/${k}_$mode.json" tune "$k $mode"
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); \
print('   GPU busy after the first batch:', r.get('runner_busy_after_first_batch'))" \
          "$out/runs/${k}_$mode.json" 2>&1 | tee -a "$summary"
      done
    done ;;
  energy:*)
    ks=$(echo "${step#energy:}" | tr , ' ')
    tasks=$(for k in $ks; do printf 'experiments/kernels/%s/task.json ' "$k"; done)
    PYTHONPATH=engine/worker/python timeout 150 python3 experiments/energy/agreement.py $tasks \
      2>&1 | tee -a "$summary"
    k=${ks%% *}
    for objective in latency energy; do
      timeout 190 "$t" tune "experiments/kernels/$k/task.json" --backend cuda \
        --objective "$objective" --budget "${BUDGET:-16}" --seed "${SEED:-1}" \
        --out "$out/runs/${k}_$objective" -q --json \
        > "$out/runs/${k}_$objective.json" 2> "$out/runs/${k}_$objective.err"
    done
    python3 - "$k" "$out/runs/${k}_latency.json" "$out/runs/${k}_energy.json" <<'EOF' 2>&1 | tee -a "$summary"
import json, sys
k = sys.argv[1]
for path in sys.argv[2:]:
    try:
        r = json.load(open(path))
    except Exception as e:
        print(f"{k}: {path}: no result ({e})")
        continue
    b, w = r["baseline"], r["best"]
    print(f"{k} tuned for {r['objective']:8}: winner {json.dumps(w.get('config'))} "
          f"{w.get('ms', float('nan')):.4f} ms {w.get('energy_j', float('nan')) * 1e3:.3f} mJ "
          f"({w.get('power_w', float('nan')):.0f} W); baseline {b.get('ms', float('nan')):.4f} ms "
          f"{b.get('energy_j', float('nan')) * 1e3:.3f} mJ; {r['evaluations']} evals "
          f"{r['seconds']:.0f} s")
EOF
    ;;
  suite|suite:*)
    rm -f "$out/suite/suite.md"
    python3 experiments/suite/run.py "$t" "$out/suite" $(echo "${step#suite}" | tr :, '  ') \
      > "$out/suite.log" 2>&1
    { cat "$out/suite/suite.md" 2>/dev/null || tail -5 "$out/suite.log"; } | tee -a "$summary" ;;
  tune:*)
    for k in $(echo "${step#tune:}" | tr , ' '); do
      timeout 240 "$t" tune "experiments/kernels/$k/task.json" --backend cuda \
        --strategy "${STRATEGY:-bo}" --budget "${BUDGET:-40}" --seed "${SEED:-1}" \
        --out "$out/runs/$k" -q --json \
        > "$out/runs/$k.json" 2> "$out/runs/$k.err"
      line "$out/runs/$k.json" tune "$k"
    done ;;
  vendor:*)
    for k in $(echo "${step#vendor:}" | tr , ' '); do
      timeout 240 "$t" tune "experiments/kernels/$k/task.json" --backend cuda \
        ${BUDGET:+--budget "$BUDGET"} --out "$out/runs/${k}_defaults" -q --json \
        > "$out/runs/${k}_defaults.json" 2> "$out/runs/${k}_defaults.err"
      line "$out/runs/${k}_defaults.json" tune "$k"
      winner "$out/runs/${k}_defaults.json"
      timeout 150 python3 experiments/suite/rerun.py "$out/runs/${k}_defaults" \
        "$(torch_op "$k" | cut -d= -f2-)" 2>&1 | tail -1 | tee -a "$summary"
    done ;;
  pool)
    for w in 1 16; do  # one batch of 240 after the baseline; its wall is the pool's throughput
      rm -rf /tmp/triton-cache-pool
      TRITON_CACHE_DIR=/tmp/triton-cache-pool timeout 300 "$t" tune -v -v \
        experiments/kernels/matmul/task.json --backend compile --strategy random --budget 240 \
        --batch 240 --compile-workers "$w" --out "$out/runs/pool$w" --json \
        > "$out/runs/pool$w.json" 2> "$out/runs/pool$w.err"
      line "$out/runs/pool$w.json" pool "$w"
      grep "batch of 240" "$out/runs/pool$w.err" | tee -a "$summary"
    done ;;
  do-bench)
    timeout 200 python3 experiments/compare_do_bench.py experiments/kernels/matmul/task.json \
      --config '{"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,"GROUP_M":8,"num_warps":8,"num_stages":3}' \
      --config '{"BLOCK_M":32,"BLOCK_N":32,"BLOCK_K":32,"GROUP_M":1,"num_warps":4,"num_stages":1}' \
      2>&1 | tee -a "$summary" ;;
  profile|profile:*)
    bash experiments/profile/ncu_reference.sh "$out/runs/ncu" $(echo "${step#profile}" | tr :, '  ') \
      > "$out/runs/ncu.log" 2>&1
    timeout 400 python3 experiments/profile/compare_ncu.py "$t" "$out/runs/ncu" 2>&1 | tee -a "$summary" ;;
  dram-prep)
    cupti=$(find /tmp/b -name 'tforge-cupti*.so' | head -1)
    for spec in "experiments/kernels/vector_add/task.json 1 add_kernel" \
                "experiments/profile/tiny_add/task.json 1 add_kernel" \
                "experiments/profile/tiny_add/task.json 2 add_kernel"; do
      read -r task shape kernel <<<"$spec"
      timeout 150 python3 experiments/profile/dram_preparation.py "$cupti" "$task" \
        --shape "$shape" 2>&1 | tee -a "$summary"
      echo "ncu, one pass, cache control off, launch.py --prepare profile:" | tee -a "$summary"
      timeout 100 ncu --clock-control none --cache-control none --kernel-name "regex:$kernel" \
        --launch-skip 1 --launch-count 1 --csv --print-units base \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        python3 experiments/profile/launch.py "$task" --shape "$shape" --prepare profile \
        2>> "$out/runs/ncu.err" | python3 experiments/profile/ncu_table.py | tee -a "$summary"
    done ;;
  labels:*)
    for k in $(echo "${step#labels:}" | tr , ' '); do
      timeout 200 "$t" profile "experiments/kernels/$k/task.json" --profiler-option set=full \
        > "$out/runs/labels_$k.txt" 2>&1
      { echo "$k:"; sed -n '/^  labels/,$p' "$out/runs/labels_$k.txt"; } | tee -a "$summary"
    done ;;
  strategies:*)
    for k in $(echo "${step#strategies:}" | tr , ' '); do
      for st in forge bo rules; do
        timeout 240 "$t" tune "experiments/kernels/$k/task.json" --backend cuda --strategy "$st" \
          --budget "${BUDGET:-30}" --seed "${SEED:-1}" ${TIMEOUT:+--timeout "$TIMEOUT"} \
          --out "$out/runs/${k}_$st" -q --json \
          > "$out/runs/${k}_$st.json" 2> "$out/runs/${k}_$st.err"
        line "$out/runs/${k}_$st.json" tune "$k $st"
      done
      python3 experiments/profile/compare_strategies.py "forge=$out/runs/${k}_forge.json" \
        "bo=$out/runs/${k}_bo.json" "rules=$out/runs/${k}_rules.json" 2>&1 | tee -a "$summary"
    done
    python3 experiments/profile/summarize_strategies.py "$out/runs" 2>&1 | tee -a "$summary" ;;
  record:*)
    for k in $(echo "${step#record:}" | tr , ' '); do
      resume=
      if [ -n "${RECORD_RESUME:-}" ] && [ -f "$RECORD_RESUME/record_$k/tforge.db" ]; then
        cp -r "$RECORD_RESUME/record_$k" "$out/runs/" && resume=--resume
      fi
      var="TASK_$k"; task=${!var:-experiments/kernels/$k/task.json}
      constraints=()
      IFS=';' read -ra given <<< "${RECORD_CONSTRAINTS:-}"
      for c in "${given[@]}"; do [ -n "$c" ] && constraints+=(--constraint "$c"); done
      gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o 'H[0-9]*' | head -1)
      name=${k}_${RECORD_NAME:-counters}_${gpu:-GPU}
      timeout "${RECORD_TIMEOUT:-500}" "$t" tune "$task" --backend cuda \
        --transforms "${RECORD_TRANSFORMS:-none}" "${constraints[@]}" --strategy exhaustive \
        --budget 100000 --profile-all ${BATCH:+--batch "$BATCH"} \
        ${TIMEOUT:+--timeout "$TIMEOUT"} $resume \
        --out "$out/runs/record_$k" -q > "$out/runs/record_$k.txt" 2>&1
      "$t" store export --store "$out/runs/record_$k/tforge.db" --run 1 \
        --out "$out/runs/$name.json.gz" 2>&1 | tee -a "$summary"
      python3 -c "import gzip,json,sys; d=json.load(gzip.open(sys.argv[1])); c=d.get('cache',{}); print(sys.argv[1], len(c), 'points')" "$out/runs/$name.json.gz" 2>&1 | tee -a "$summary"
      # the strategies on it, steered by its counters, over many seeds (seconds, on the CPU)
      "$t" replay --cache "$out/runs/$name.json.gz" --strategy forge,bo,rules \
        --budget "${BUDGET:-30}" --seeds 50 2>&1 | tail -5 | tee -a "$summary"
    done ;;
  timing)
    timeout 240 python3 experiments/timing/protocol.py experiments/kernels/matmul/task.json \
      --config '{"BLOCK_M":128,"BLOCK_N":256,"BLOCK_K":64,"GROUP_M":8,"num_warps":8,"num_stages":4}' \
      --config '{"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,"GROUP_M":8,"num_warps":4,"num_stages":3}' \
      --json "$out/runs/timing_matmul.json" 2>&1 | tee -a "$summary"
    timeout 150 python3 experiments/timing/protocol.py experiments/kernels/attention/task.json \
      --json "$out/runs/timing_attention.json" 2>&1 | tee -a "$summary" ;;
  faults)
    timeout 500 "$t" tune tests/fixtures/tasks/faulty/task_gpu.json --backend cuda \
      --strategy exhaustive --budget 50 --timeout 8 --out "$out/runs/faulty" -q --json \
      > "$out/runs/faulty.json" 2> "$out/runs/faulty.err"
    line "$out/runs/faulty.json" faults faulty ;;
  *) echo "unknown step $step" | tee -a "$summary" ;;
  esac
done
tar -C "$out" -czf "$out/runs.tar.gz" runs && rm -rf "$out/runs"
echo; cat "$summary"
