#!/usr/bin/env bash
# Reference counters from Nsight Compute for the kernels our profiler is checked on (issue 16:
# "our metrics agree with ncu within 5%"), clocks left as they are (--clock-control none, as our
# profiler leaves them). Each kernel is taken twice: with ncu's cache control (caches flushed and
# invalidated before each replay pass, the default), without it (NAME_noflush.csv: the caches
# as the back-to-back launches left them) and without it after our profiler's preparation of a
# pass (NAME_prepared.csv: launch.py --prepare profile), for the DRAM traffic each sees.
# Usage: experiments/profile/ncu_reference.sh OUT_DIR [NAME...]  (NAMEs: only those kernels)
set -u
out=$1
shift
only=" $* "
mkdir -p "$out"
metrics=sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
metrics=$metrics,sm__inst_issued.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
metrics=$metrics,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics=$metrics,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics=$metrics,dram__bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics=$metrics,sm__cycles_elapsed.avg.per_second,sm__inst_executed.sum
run() { # NAME TASK KERNEL [CONFIG]
  local name=$1 task=$2 kernel=$3
  shift 3
  [ "$only" != "  " ] && [[ $only != *" $name "* ]] && return
  for take in all none prepared; do
    local file=$name cache=$take prepare=none
    [ $take = none ] && file=${name}_noflush
    [ $take = prepared ] && file=${name}_prepared cache=none prepare=profile
    timeout 120 ncu --clock-control none --cache-control $cache --kernel-name "regex:$kernel" \
      --launch-skip 1 --launch-count 1 --csv --print-units base --metrics "$metrics" \
      python3 experiments/profile/launch.py "$task" --prepare $prepare "$@" \
      > "$out/$file.csv" 2>> "$out/ncu.err"
    echo "== $file"
    python3 experiments/profile/ncu_table.py < "$out/$file.csv"
  done
}
run matmul_best experiments/kernels/matmul/task.json matmul_kernel \
  --config '{"BLOCK_M":128,"BLOCK_N":256,"BLOCK_K":64,"GROUP_M":8,"num_warps":8,"num_stages":4}'
run matmul_baseline experiments/kernels/matmul/task.json matmul_kernel
run attention_baseline experiments/kernels/attention/task.json attn_fwd
run softmax_baseline experiments/kernels/softmax/task.json softmax_kernel
run vector_add_16M experiments/kernels/vector_add/task.json add_kernel --shape 1
run tiny_add experiments/profile/tiny_add/task.json add_kernel
