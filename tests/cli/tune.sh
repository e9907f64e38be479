#!/usr/bin/env bash
# `tforge tune` end to end without a GPU: the interpreter backend on two examples, the replay
# backend with interpreter checks, planted faults (crash, hang, raise, wrong), --profile-all and
# its export, forge steered by recorded counters (the report's steer table), resume, bad input.
# usage: tune.sh TFORGE PYTHON SOURCE_DIR
set -u
tforge=$1 python=$2 src=$3
. "$(dirname "$0")/../support/preamble.sh"
# stored DB: how many measurements the store holds
stored() { "$python" -c "import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM measurements').fetchone()[0])" \
  "$1" 2>/dev/null || echo 0; }
# json FILE EXPR: evaluates a Python assertion over the result document `r`

for k in vector_add softmax; do
  if "$tforge" tune "$src/experiments/kernels/$k/task.json" --backend interpret --budget 3 \
       --transforms none --compile-workers 2 --out "$work/$k" -q > "$work/$k.txt" 2>&1 &&
     json "$work/$k/result.json" 'r["timed"] is False and r["evaluations"] >= 4 and all(h["status"] == "ok" for h in r["history"])' &&
     grep -q 'correctness only, no timing' "$work/$k/report.md"; then ok; else bad "interpret $k"; cat "$work/$k.txt"; fi
done

space=$src/data/h200/matmul_0_H200.json.gz
if "$tforge" tune "$src/experiments/kernels/matmul/task.json" --backend "replay:$space" --check \
     --budget 4 --out "$work/mm" -q > "$work/mm.txt" 2>&1 &&
   json "$work/mm/result.json" 'r["speedup"] > 1 and r["best"]["ms"] < r["baseline"]["ms"]' &&
   json "$work/mm/result.json" 'all(v >= 0 for v in r["seconds_split"].values()) and r["seconds_split"]["baselines"] > 0 and sum(v for k, v in r["seconds_split"].items() if k not in ("load_task", "compile_summed")) <= r["seconds"] + r["seconds_split"]["setup"] + r["seconds_split"]["winner"] + 0.01' &&
   grep -q '^BEST = triton.Config({' "$work/mm/best_config.py"; then ok; else bad "replay with checks"; cat "$work/mm.txt"; fi

# A source transform joins the space: its variants are checked like any candidate, and the
# report says what applies and what each evaluation rewrote.
if "$tforge" tune "$src/experiments/kernels/softmax/task.json" --backend interpret --budget 3 \
     --transforms exp2 --compile-workers 2 --out "$work/exp2" -q > "$work/exp2.txt" 2>&1 &&
   json "$work/exp2/result.json" 'r["transforms"]["apply"] == ["exp2"] and all(h["status"] == "ok" for h in r["history"])' &&
   grep -q '^## Source transforms' "$work/exp2/report.md" &&
   grep -q '^- `exp2`: ' "$work/exp2/report.md" &&
   grep -q '^| # | config | rewrites | status' "$work/exp2/report.md"; then ok; else bad "tune with a transform"; cat "$work/exp2.txt" "$work/exp2/report.md"; fi

# Planted faults: each is a candidate's status, and the run finishes with the others measured.
if "$tforge" tune "$src/tests/fixtures/tasks/faulty/task.json" --backend interpret \
     --transforms none \
     --strategy exhaustive --budget 10 --timeout 10 --compile-workers 2 --out "$work/faulty" -q \
     > "$work/faulty.txt" 2>&1 &&
   json "$work/faulty/result.json" '[h["status"] for h in r["history"]].count("ok") == 2 and len(r["history"]) == 10 and [h["status"] for h in r["history"]].count("timeout") == 2 and [h["status"] for h in r["history"]].count("runtime") == 4 and [h["status"] for h in r["history"]].count("wrong") == 2 and r["workers_replaced"] >= 4'; then ok; else bad "planted faults"; cat "$work/faulty.txt" "$work/faulty/report.md"; fi

# --profile-all: every candidate profiled and stored, so that the exported recording carries the
# counters (planted here in a copy of the recorded space) and replays, forge labelled by them.
"$python" - "$space" "$work/counted.json" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
for i, e in enumerate(d["cache"].values()):
    if isinstance(e["time"], float):
        e["dram_pct"], e["sm_pct"] = 10.0 + i % 50, 70.0
json.dump(d, open(sys.argv[2], "w"))
EOF
if "$tforge" tune "$src/experiments/kernels/matmul/task.json" --backend "replay:$work/counted.json" \
     --strategy exhaustive --budget 2000 --profile-all --out "$work/all" -q > "$work/all.txt" 2>&1 &&
   "$tforge" store export --store "$work/all/tforge.db" --run 1 --out "$work/all.json" \
     >> "$work/all.txt" 2>&1 &&
   "$python" - "$work/counted.json" "$work/all.json" <<'EOF'
import json, sys
planted, exported = (json.load(open(p))["cache"] for p in sys.argv[1:])
timed = [k for k, e in planted.items() if isinstance(e["time"], float)]
assert timed and all(exported[k]["dram_pct"] == planted[k]["dram_pct"] for k in timed)
assert all("occupancy_theoretical" in exported[k] for k in timed)  # the static metrics too
EOF
then ok; else bad "tune --profile-all, then export"; cat "$work/all.txt"; fi
if "$tforge" replay --cache "$work/all.json" --strategy forge --budget 5 --seeds 1 \
     --store "$work/all_lab.db" > "$work/all_lab.txt" 2>&1 &&
   "$python" - "$work/all_lab.db" <<'EOF'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT counters, labels FROM profiles").fetchall()
assert any(c == "ok" and "compute-bound" in l for c, l in rows), rows
EOF
then ok; else bad "replay of the exported recording, steered by its counters"; cat "$work/all_lab.txt"; fi
# forge steered by recorded counters: the report names the label and what it moved. The baseline
# alone is no evidence for its labels (no prior, and the report says why), nor are the
# measurements at the incumbents of evaluations 2 and 3 (three points or fewer are never beyond
# chance) and 8; the first incumbent the measurements bear them out at (evaluation 11) is
# steered.
if "$tforge" tune "$src/experiments/kernels/matmul/task.json" --backend "replay:$work/counted.json" \
     --strategy forge --budget 12 --out "$work/steered" -q > "$work/steered.txt" 2>&1 &&
   grep -q '^| 11 | `{"BLOCK_M":128,"BLOCK_N":128,.*` | compute-bound | BLOCK_M up, BLOCK_N up' \
     "$work/steered/report.md" &&
   grep -q 'The baseline: counters ok. No prior: the measurements so far do not bear out' \
     "$work/steered/report.md" &&
   json "$work/steered/result.json" 'not any(p["steered"] for p in r["profile"]["profiles"][:4]) and r["profile"]["profiles"][4]["evaluation"] == 10 and r["profile"]["profiles"][4]["steered"] and r["profile"]["profiles"][4]["labels"][0]["label"] == "compute-bound"'
then ok; else bad "forge steered by recorded counters"; cat "$work/steered.txt"; fi

# Resume: the same settings continue the stored run and evaluate nothing twice.
args=(tune "$src/experiments/kernels/matmul/task.json" --backend "replay:$space" --budget 12
      --strategy annealing --out "$work/resume" -q)
"$tforge" "${args[@]}" > /dev/null 2>&1
if "$tforge" "${args[@]}" --resume > "$work/resume.txt" 2>&1 &&
   json "$work/resume/result.json" 'r["resumed"] == 13 and r["evaluations"] == 13'; then ok; else bad "resume"; cat "$work/resume.txt"; fi

# --resume with another setting refuses, naming it, and leaves the stored run as it was.
"$tforge" "${args[@]}" --resume --seed 2 > "$work/resume2.txt" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'has seed 1, this run asks for 2' "$work/resume2.txt" &&
   [ "$(stored "$work/resume/tforge.db")" -eq 13 ]; then ok; else bad "resume refusal (exit $rc)"; cat "$work/resume2.txt"; fi

# --resume after the kernel file changed refuses: the stored times are of another kernel.
mkdir -p "$work/stale" && cp "$src/experiments/kernels/matmul/"* "$work/stale/"
stale=(tune "$work/stale/task.json" --backend "replay:$space" --budget 3 --strategy random
       --out "$work/stale/out" -q)
"$tforge" "${stale[@]}" > /dev/null 2>&1
echo "# edited" >> "$work/stale/kernel.py"
"$tforge" "${stale[@]}" --resume > "$work/stale.txt" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "stale/kernel.py changed since the stored run 1" "$work/stale.txt"
then ok; else bad "stale resume (exit $rc)"; cat "$work/stale.txt"; fi

# Two runs in one results folder at once: the second is refused before it writes anything.
slow=(tune "$src/experiments/kernels/vector_add/task.json" --backend interpret --budget 40
      --compile-workers 1 --out "$work/busy" -q)
"$tforge" "${slow[@]}" > /dev/null 2>&1 &
first=$!
for _ in $(seq 100); do [ -e "$work/busy/.tforge.lock" ] && break; sleep 0.1; done
sleep 1
"$tforge" "${slow[@]}" > "$work/busy.txt" 2>&1
rc=$?
kill "$first" 2>/dev/null; wait "$first" 2>/dev/null
if [ "$rc" -eq 2 ] && grep -q "busy is in use by another tforge tune" "$work/busy.txt"
then ok; else bad "busy --out (exit $rc)"; cat "$work/busy.txt"; fi

# A tuning run exported from the store is a recorded space that replay reads back.
if "$tforge" store export --store "$work/resume/tforge.db" --run 1 --out "$work/run1.json" \
     > "$work/export.txt" 2>&1 &&
   "$tforge" replay --cache "$work/run1.json" --strategy random --seeds 2 --budget 5 --json \
     > "$work/run1_replay.json" 2>>"$work/export.txt" &&
   json "$work/run1_replay.json" 'r["configurations"] == 13 and r["strategies"][0]["score"] == r["strategies"][0]["score"]'; then ok; else bad "export a tune run"; cat "$work/export.txt"; fi

# An untimed run (the interpreter's) has nothing a recording could hold: refused, named.
"$tforge" store export --store "$work/vector_add/tforge.db" --run 1 --out "$work/untimed.json" \
  > "$work/untimed.txt" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'correct but untimed measurements are not exported' "$work/untimed.txt" &&
   grep -q 'nothing to export' "$work/untimed.txt" && [ ! -e "$work/untimed.json" ]; then ok; else bad "export of an untimed run (exit $rc)"; cat "$work/untimed.txt"; fi

# A malformed task names the field and exits 2.
sed 's/"dtype": "float16", "init": "randn"}/"dtype": "float17", "init": "randn"}/' \
  "$src/experiments/kernels/matmul/task.json" > "$work/bad.json"
cp "$src/experiments/kernels/matmul/kernel.py" "$work/"
"$tforge" tune "$work/bad.json" --backend interpret > "$work/bad.txt" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'inputs\[0\].dtype' "$work/bad.txt"; then ok; else bad "bad task (exit $rc)"; cat "$work/bad.txt"; fi

# Errors of the task itself (its reference, its launch expressions, its shapes) are not the
# candidates': the run stops at the first evaluation with exit 2, naming the file and field.
mkdir -p "$work/broken"
cp "$src/experiments/kernels/vector_add/kernel.py" "$work/broken/"
cat >> "$work/broken/kernel.py" <<'PY'


def raising_reference(inputs):
    raise RuntimeError("the reference is broken")


def wrong_shape_reference(inputs):
    return inputs["x"][:-1] + inputs["y"][:-1]
PY
broken() { # NAME PYTHON-EDIT EXPECTED-TEXT
  "$python" - "$src/experiments/kernels/vector_add/task.json" "$work/broken/$1.json" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["shapes"] = {"tune": [{"N": 4096}], "check": [{"N": 1000}]}
exec(sys.argv[3])
json.dump(t, open(sys.argv[2], "w"))
PY
  "$tforge" tune "$work/broken/$1.json" --backend interpret --budget 5 --compile-workers 1 \
    --out "$work/broken/$1" -q > "$work/broken/$1.txt" 2>&1
  rc=$?
  n=$(stored "$work/broken/$1/tforge.db")
  if [ "$rc" -eq 2 ] && grep -q "$3" "$work/broken/$1.txt" && [ "$n" -eq 0 ]; then ok
  else bad "task error $1 (exit $rc, $n stored)"; cat "$work/broken/$1.txt"; fi
}
broken reference 't["reference"] = "kernel:raising_reference"' \
  "$work/broken/reference.json: reference: kernel:raising_reference failed: RuntimeError"
broken reference_shape 't["reference"] = "kernel:wrong_shape_reference"' \
  "reference: kernel:wrong_shape_reference returned out as torch.float32 (999,)"
broken grid 't["launch"]["grid"] = "(triton.cdiv(N, BLOCK) // 0,)"' \
  "launch.grid: '(triton.cdiv(N, BLOCK) // 0,)' failed: ZeroDivisionError"
broken space 't["space"]["params"]["BLOCK"] = list(range(1, 70000))' \
  "$work/broken/space.json: space.params.BLOCK: parameter 'BLOCK' has 69999 values"
broken shape 't["inputs"][0]["shape"] = ["N - 5000"]' \
  "inputs\[0\].shape\[0\]: 'N - 5000' is -904 at shape"

# A file name holding a newline stays inside the comments of the generated Python.
odd="$work/we
ird"
mkdir -p "$odd" && cp "$src/experiments/kernels/matmul/"* "$odd/"
if "$tforge" tune "$odd/task.json" --backend "replay:$space" --budget 2 --out "$work/odd" -q \
     > "$work/odd.txt" 2>&1 &&
   "$python" -c "import ast, sys; [ast.parse(open(f).read()) for f in sys.argv[1:]]" \
     "$work/odd/best_config.py" "$work/odd/best_variant.py" &&
   [ "$(grep -c '^ird' "$work/odd/best_config.py" "$work/odd/best_variant.py" | grep -c ':0$')" -eq 2 ]
then ok; else bad "escaped paths"; cat "$work/odd.txt"; fi

# A kernel file that never finishes importing obeys --timeout: exit 2, naming the file.
mkdir -p "$work/hang" && cp "$src/experiments/kernels/vector_add/"* "$work/hang/"
printf '\n\ndef _forever():\n    while True:\n        pass\n\n\nLIMIT = _forever()\n\n\ndef use():\n    return LIMIT\n' >> "$work/hang/kernel.py"
start=$(date +%s)
"$tforge" tune "$work/hang/task.json" --backend interpret --timeout 3 --out "$work/hang/out" -q \
  > "$work/hang.txt" 2>&1
rc=$? took=$(( $(date +%s) - start ))
if [ "$rc" -eq 2 ] && [ "$took" -lt 60 ] && grep -q "$work/hang/task.json: the worker loading it" "$work/hang.txt"
then ok; else bad "import timeout (exit $rc after $took s)"; cat "$work/hang.txt"; fi

# The file's own wrapper as the launch, every tuning shape in turn: a summary per shape.
real=$src/tests/python/fixtures/real_shapes
if "$tforge" tune "$real/scale_rows_task.json" --backend interpret --shape all --budget 2 \
     --compile-workers 2 --out "$work/all" > "$work/all.txt" 2>&1 &&
   json "$work/all/summary.json" 'len(r["shapes"]) == 2 and all(s["ok"] for s in r["shapes"])' &&
   json "$work/all/shape-1/result.json" 'r["baseline"]["config"] == {"BLOCK_SIZE": 4096, "num_warps": 8}' &&
   grep -q '^shape 1: {"R":8,"C":3000}' "$work/all.txt"; then ok; else bad "--shape all"; cat "$work/all.txt"; fi

# A baseline that fails: exit 1, naming the first failure; the results are still written.
mkdir -p "$work/nobase" && cp "$real/"* "$work/nobase/"
"$python" - "$work/nobase/add_task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["reference"] = "ref:expected"
t["baseline"] = {"BLOCK": 100}  # not a power of two: tl.arange refuses it
json.dump(t, open(sys.argv[1], "w"))
PY
printf 'def expected(inputs):\n    return inputs["a"] + inputs["b"]\n\nprint("a demo")\n' > "$work/nobase/ref.py"
"$tforge" tune "$work/nobase/add_task.json" --backend interpret --budget 2 --compile-workers 2 \
  --out "$work/nobase/out" -q > "$work/nobase.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'the baseline failed, so nothing was measured against it: {"BLOCK":100} ' "$work/nobase.txt" &&
   [ -f "$work/nobase/out/report.md" ]; then ok; else bad "failing baseline (exit $rc)"; cat "$work/nobase.txt"; fi
# -v lists what the import filter dropped, in the kernel file and in the reference's module.
"$tforge" tune "$work/nobase/add_task.json" --backend interpret --budget 1 --compile-workers 2 \
  --out "$work/nobase/out2" -v > "$work/verbose.txt" 2>&1
if grep -q "nobase/rows.py:51-53: dropped main-guard (binds x)" "$work/verbose.txt" &&
   grep -q "nobase/ref.py:4: dropped call" "$work/verbose.txt"; then ok; else bad "-v dropped statements"; grep -i dropped "$work/verbose.txt"; fi

# init: a real-shaped file's own demo becomes a task that passes, and that tune then tunes.
realistic=$src/tests/python/fixtures/realistic
if "$tforge" init "$realistic/rms_norm_liger.py" --out "$work/init" > "$work/init.txt" 2>&1 &&
   grep -q '1 task(s) written, 1 passed their check' "$work/init.txt" &&
   "$tforge" check "$work/init/_rms_norm_forward_kernel_0/task.json" > "$work/check.txt" 2>&1 &&
   grep -q "(Triton's CPU interpreter): ok" "$work/check.txt" &&
   "$tforge" tune "$work/init/_rms_norm_forward_kernel_0/task.json" --backend interpret --budget 2 \
     --compile-workers 2 --out "$work/init/out" -q > "$work/init_tune.txt" 2>&1
then ok; else bad "init, check, tune"; cat "$work/init.txt" "$work/check.txt" "$work/init_tune.txt"; fi

# capture: a script's launches; a script that launches nothing exits 1 and says so.
printf 'import sys\nsys.path.insert(0, %s)\nimport torch, rows\nrows.add(torch.ones(3000), torch.ones(3000))\n' \
  "'$real'" > "$work/run_add.py"
if "$tforge" capture --out "$work/cap" -- python "$work/run_add.py" > "$work/cap.txt" 2>&1 &&
   json "$work/cap/_add_kernel_0/task.json" 'r["launch"]["grid"] == "(cdiv(n_elements, BLOCK),)"'
then ok; else bad "capture"; cat "$work/cap.txt"; fi
printf 'print("nothing here")\n' > "$work/idle.py"
"$tforge" capture --out "$work/idle" -- python "$work/idle.py" > "$work/idle.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'no Triton kernel launch was recorded' "$work/idle.txt"; then ok; else bad "capture of nothing (exit $rc)"; cat "$work/idle.txt"; fi

# a check that kills its process fails that task alone, and the report still comes
"$tforge" init "$src/tests/python/fixtures/abort_at_small_shapes.py" --out "$work/abort" \
  > "$work/abort.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "check: runtime: the check's worker killed by signal 6" "$work/abort.txt" &&
   grep -q '1 task(s) written, 0 passed their check' "$work/abort.txt"; then ok; else bad "init with a crashing check (exit $rc)"; cat "$work/abort.txt"; fi

# check: a bad task is exit 2, naming the field; a failing baseline exit 1, saying why.
if "$tforge" check "$work/nobase/add_task.json" > "$work/check_bad.txt" 2>&1; then rc=0; else rc=$?; fi
if [ "$rc" -eq 1 ] && grep -q 'baseline {"BLOCK":100} at {"N":3000}' "$work/check_bad.txt"; then ok; else bad "check of a failing baseline (exit $rc)"; cat "$work/check_bad.txt"; fi

# TFORGE_PYTHONPATH: its folders in order, first found first (here a module that two hold).
mkdir -p "$work/pp/a" "$work/pp/b" "$work/pp/task" && cp "$real/"* "$work/pp/task/"
echo 'WHO = 256' > "$work/pp/a/who.py"; echo 'WHO = 512' > "$work/pp/b/who.py"
printf 'import who\n\n\ndef f(shape):\n    return {"BLOCK": who.WHO}\n' > "$work/pp/basefn.py"
"$python" -c "import json, sys; t = json.load(open(sys.argv[1])); t['baseline'] = 'basefn:f'; json.dump(t, open(sys.argv[1], 'w'))" "$work/pp/task/add_task.json"
if TFORGE_PYTHONPATH="$work/pp:$work/pp/a:$work/pp/b" "$tforge" check "$work/pp/task/add_task.json" > "$work/pp.txt" 2>&1 &&
   grep -q 'baseline {"BLOCK":256}' "$work/pp.txt"; then ok; else bad "TFORGE_PYTHONPATH order"; cat "$work/pp.txt"; fi

finish "tune"
