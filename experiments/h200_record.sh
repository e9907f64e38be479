#!/usr/bin/env bash
# Records tuning spaces of the example kernels on a GPU (see record_space.py). Usage: experiments/h200_record.sh OUT_DIR KERNEL:SHAPE...
# e.g. experiments/h200_record.sh out softmax:0 layer_norm:0 matmul:0
# TASK_FILE (default task.json) names another task file in each kernel's folder, e.g.
# task_shapes.json; ENERGY=1 records each configuration's joules too (NVML, about 2 s more a
# configuration); RECORD_ARGS are passed to record_space.py (e.g. "--rep-ms 10"); the recordings
# are named after the GPU (H100, H200).
set -u
out=$1
shift
mkdir -p "$out/spaces"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())" | tee "$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv >> "$out/summary.txt" 2>&1
for spec in "$@"; do
  kernel=${spec%%:*} shape=${spec##*:}
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o 'H[0-9]*' | head -1)
  name=${kernel}_${shape}_${gpu:-GPU}
  echo "== $name" | tee -a "$out/summary.txt"
  python3 experiments/record_space.py "experiments/kernels/$kernel/${TASK_FILE:-task.json}" \
    --shape "$shape" --out "$out/spaces/$name.json.gz" ${ENERGY:+--energy} ${RECORD_ARGS:-} > "$out/spaces/$name.log" 2>&1
  grep -E "valid configurations|compiled in|measured in|baseline" "$out/spaces/$name.log" | tee -a "$out/summary.txt"
done
tar -C "$out" -czf "$out/spaces.tar.gz" spaces && rm -rf "$out/spaces"
