#!/usr/bin/env bash
# vector_add at 16M elements (its baseline, 131072 programs of 128): our profiler's SM
# throughput, issue slots and SM clock under each preparation (dram_preparation.py) beside
# Nsight Compute's, for the SM counters that read 1.4-1.6x ncu's there (experiments/NOTES.md,
# session 13). Builds only the cupti plugin. On the GPU machine, from the repository's root,
# with the Debian packages of .deps: bash experiments/profile/sm_clock.sh
set -u
. experiments/deps_env.sh
{ cmake -S . -B /tmp/b -DPython3_EXECUTABLE="$(command -v python3)" &&
  cmake --build /tmp/b --target tforge-cupti -j "$(nproc)"; } > /tmp/sm_clock_build.log 2>&1 ||
  { tail -20 /tmp/sm_clock_build.log; exit 1; }
task=experiments/kernels/vector_add/task.json
cupti=$(find /tmp/b -name 'tforge-cupti*.so' | head -1)
timeout 90 python3 experiments/profile/dram_preparation.py "$cupti" "$task" --shape 1
echo "ncu (caches flushed):"
timeout 90 ncu --clock-control none --kernel-name regex:add_kernel --launch-skip 1 --launch-count 1 \
  --csv --print-units base --metrics sm__throughput.avg.pct_of_peak_sustained_elapsed,\
smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,\
sm__inst_executed.sum,gpu__time_duration.sum python3 experiments/profile/launch.py "$task" --shape 1 |
  python3 experiments/profile/ncu_table.py
