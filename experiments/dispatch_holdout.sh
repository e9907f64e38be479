#!/usr/bin/env bash
# One kernel for every shape, on recorded spaces: each shape of TASK tuned on the replay backend
# from RECORDINGS/<name>_<i>_*.json.gz (exhaustively, so its own winner is its optimum), then
# `tforge dispatch` fitted leaving one shape out at a time (each shape that has fitted shapes on
# both sides of it in index order), the held-out shape's choice against its own winner. Prints a
# table (shape, choice ms, own winner ms, ratio) and how many are within 5%; writes the dispatch
# of every shape to OUT/dispatch.py.
# usage: experiments/dispatch_holdout.sh TFORGE TASK.json RECORDINGS NAME OUT
#   e.g. experiments/dispatch_holdout.sh build/bin/tforge experiments/kernels/softmax/task.json \
#        data/h200 softmax /tmp/dispatch-softmax
set -eu
tforge=$1 task=$2 recordings=$3 name=$4 out=$5
python=${PYTHON:-python3}
mkdir -p "$out"
shapes=()
for file in "$recordings/${name}"_*_*.json.gz; do
  i=${file#"$recordings/${name}_"}
  i=${i%%_*}
  shapes+=("$i")
done
[ ${#shapes[@]} -ge 3 ] || { echo "need recordings of 3 shapes at least in $recordings"; exit 2; }
for i in "${shapes[@]}"; do
  [ -f "$out/shape-$i/result.json" ] ||
    "$tforge" tune "$task" --shape "$i" --backend "replay:$(ls "$recordings/${name}_${i}_"*.json.gz)" \
      --strategy exhaustive --budget 100000 --out "$out/shape-$i" -q > "$out/tune-$i.txt" 2>&1
done
results=("$out"/shape-*/result.json)
"$tforge" dispatch "${results[@]}" --out "$out/dispatch.py" > "$out/dispatch.txt"
sorted=($(printf '%s\n' "${shapes[@]}" | sort -n))
printf '| held out | choice ms | own winner ms | ratio |\n|---|---|---|---|\n'
within=0 total=0
for ((k = 1; k + 1 < ${#sorted[@]}; k++)); do
  i=${sorted[$k]}
  "$tforge" dispatch "${results[@]}" --holdout-shapes "$i" --out "$out/holdout-$i.py" --json \
    > "$out/holdout-$i.json"
  line=$("$python" -c "import json, sys
r = [x for x in json.load(open(sys.argv[1]))['rows'] if x['held_out']][0]
ms = r['choice_ms']
print(f\"| {r['shape']} | {'not measured' if ms is None else format(ms, '.4g')} | {r['winner_ms']:.4g} | \"
      f\"{(ms / r['winner_ms']) if ms is not None else float('inf'):.3f}x |\")" "$out/holdout-$i.json")
  echo "$line"
  total=$((total + 1))
  ratio=${line##*| }
  "$python" -c "import sys; sys.exit(0 if float(sys.argv[1].rstrip('x |')) <= 1.05 else 1)" \
    "$ratio" && within=$((within + 1))
done
echo "$within of $total held-out shapes within 5% of their own winner"
