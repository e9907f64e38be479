#!/usr/bin/env bash
# `--objective energy` over a recording that carries energy as Kernel Tuner's NVML observer
# writes it (tests/fixtures/recordings/vector_add_nvml_energy.json, SYNTHETIC numbers: BLOCK 512
# the fastest, BLOCK 1024 the most frugal): `tforge replay` scores the methodology on joules and
# `tforge tune --backend replay:FILE` picks the energy winner, latency the latency winner; both
# refuse a recording without energy, naming the file and what is missing.
# usage: replay_energy.sh TFORGE PYTHON SOURCE_DIR
set -u
tforge=$1 python=$2 src=$3
. "$(dirname "$0")/../support/preamble.sh"

rec=$src/tests/fixtures/recordings/vector_add_nvml_energy.json
"$python" - "$rec" "$work/no_energy.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["cache"].values():
    del e["nvml_energy"], e["nvml_power"]
json.dump(d, open(sys.argv[2], "w"))
EOF

# the methodology's optimum and median are joules under energy, ms under latency
"$tforge" replay --cache "$rec" --objective energy --strategy exhaustive,random --seeds 3 \
  --budget 5 --json -q > "$work/energy.json" 2>&1
if json "$work/energy.json" 'r["objective"] == "energy" and r["unit"] == "J" and r["optimum"] == 0.051 and r["median"] == 0.066 and [s["median"] for s in r["strategies"] if s["strategy"] == "exhaustive"] == [[0.09, 0.07, 0.066, 0.051, 0.051]]'
then ok; else bad "replay --objective energy"; cat "$work/energy.json"; fi
"$tforge" replay --cache "$rec" --objective latency --strategy exhaustive --seeds 1 --budget 5 \
  --json -q > "$work/latency.json" 2>&1
if json "$work/latency.json" 'r["objective"] == "latency" and r["optimum"] == 0.15'
then ok; else bad "replay --objective latency"; cat "$work/latency.json"; fi

"$tforge" replay --cache "$work/no_energy.json" --objective energy --strategy exhaustive \
  --seeds 1 --budget 5 > "$work/refused.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "no_energy.json: objective energy: none of the 5 recorded configurations that ran has a value (energy: no energy_j measured" "$work/refused.txt"
then ok; else bad "replay refuses energy without energy (exit $rc)"; cat "$work/refused.txt"; fi

# tune over the task's space, narrowed to what the recording holds
tune() { "$tforge" tune "$src/experiments/kernels/vector_add/task.json" --backend "replay:$1" \
  --constraint "num_warps == 4" --constraint "num_stages == 1" --strategy exhaustive --budget 5 \
  --compile-workers 1 --objective "$2" --out "$3" -q; }
for objective in energy latency; do
  tune "$rec" $objective "$work/$objective" > "$work/$objective.txt" 2>&1
done
if json "$work/energy/result.json" 'r["objective"] == "energy" and r["best"]["config"]["BLOCK"] == 1024 and r["best"]["value"] == 0.051 and r["best"]["energy_j"] == 0.051 and r["best"]["power_w"] == 300 and r["best"]["ms"] == 0.17 and r["baseline"]["energy_j"] == 0.09' &&
   grep -qx "baseline 0.09 J -> best 0.051 J: 1.76x" "$work/energy.txt"
then ok; else bad "tune --objective energy"; cat "$work/energy.txt"; fi
if json "$work/latency/result.json" 'r["objective"] == "latency" and r["best"]["config"]["BLOCK"] == 512 and r["best"]["ms"] == 0.15 and r["best"]["energy_j"] == 0.066' &&
   grep -qx "baseline 0.3 ms -> best 0.15 ms: 2.00x" "$work/latency.txt"
then ok; else bad "tune --objective latency"; cat "$work/latency.txt"; fi
tune "$work/no_energy.json" energy "$work/refused" > "$work/tune_refused.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "no_energy.json: objective energy: none of the 5 recorded configurations that ran has a value" "$work/tune_refused.txt"
then ok; else bad "tune refuses energy without energy (exit $rc)"; cat "$work/tune_refused.txt"; fi

finish "replay energy"
