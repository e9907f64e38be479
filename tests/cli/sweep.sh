#!/usr/bin/env bash
# `tforge sweep` alone and under mpirun, on the CPU (Triton's interpreter): a manifest with an
# error is refused naming the file and the field (exit 2, under mpirun too, every rank stopped);
# two tasks x two shapes on 3 ranks, one of them killed (-9) mid-sweep, then --resume: every
# row committed before the kill is still there as it was, every row names its device, and the
# sweep ends with the same evaluations and winners as on 1 rank.
# usage: sweep.sh TFORGE PYTHON SOURCE_DIR MPIRUN
set -u
tforge=$1 python=$2 src=$3 mpirun=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
. "$(dirname "$0")/../support/preamble.sh"

# refused NAME FIELD_PATTERN JSON: the manifest is refused, exit 2, naming its file and field
refused() {
  printf '%s' "$3" > "$work/$1.json"
  "$tforge" sweep "$work/$1.json" --out "$work/never" -q > "$work/out.txt" 2>&1
  local rc=$?
  if [ "$rc" -eq 2 ] && grep -Eq -- "$work/$1.json: $2" "$work/out.txt" && [ ! -e "$work/never" ]
  then ok; else bad "manifest $1 -> exit $rc, want 2 naming '$2'"; cat "$work/out.txt"; fi
}
task=$src/experiments/kernels/vector_add/task.json
refused unknown 'tasks\[0\]\.budgt: unknown field' \
  '{"tasks": [{"task": "'$task'", "shapes": [0], "backend": "interpret", "budgt": 2}]}'
refused budget 'tasks\[0\]\.budget: expected a whole number >= 1' \
  '{"tasks": [{"task": "'$task'", "shapes": [0], "backend": "interpret", "budget": 0}]}'
refused nobudget 'tasks\[0\]\.budget: expected a budget or a time' \
  '{"tasks": [{"task": "'$task'", "shapes": [0], "backend": "interpret"}]}'
refused backend 'defaults\.backend: expected cuda, interpret, compile or replay:FILE' \
  '{"defaults": {"backend": "gpu"}, "tasks": [{"task": "'$task'", "shapes": [0]}]}'
refused shapes 'tasks\[1\]\.shapes\[1\]: expected a shape not listed before' \
  '{"defaults": {"backend": "interpret", "budget": 1}, "tasks": [{"task": "'$task'", "shapes": [1]}, {"task": "'$task'", "shapes": [0, 1]}]}'
refused options 'tasks\[0\]\.options: expected a list of "KEY=VALUE" texts' \
  '{"tasks": [{"task": "'$task'", "shapes": [0], "backend": "interpret", "budget": 1, "options": ["seed"]}]}'
refused top 'tasks: expected a list of at least one task' '{"tasks": []}'
refused json 'not a JSON object' '{"tasks": '
# under mpirun: refused on rank 0, the other ranks told to stop (no hang)
timeout 120 "$mpirun" -n 2 "$tforge" sweep "$work/unknown.json" --out "$work/never" -q \
  > "$work/out.txt" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "tasks\[0\]\.budgt: unknown field" "$work/out.txt"; then ok
else bad "manifest refused under mpirun -> exit $rc"; cat "$work/out.txt"; fi

cat > "$work/sweep.json" <<JSON
{"defaults": {"backend": "interpret", "budget": 2, "transforms": "none", "compile_workers": 1,
              "strategy": "random", "seed": 3},
 "tasks": [{"task": "$src/experiments/kernels/vector_add/task.json", "shapes": [0, 1]},
           {"task": "$src/experiments/kernels/softmax/task.json", "shapes": [0, 1]}]}
JSON
# rows DIR: every stored row of every (task, shape), one a line, as a JSON list
rows() {
  "$python" - "$1" <<'PY'
import glob, json, sqlite3, sys
out = []
for db in sorted(glob.glob(sys.argv[1] + "/*/shape-*/tforge.db")):
    c = sqlite3.connect(db)
    for row in c.execute("SELECT m.id, m.run_id, m.seq, c.key, m.status, m.metrics FROM "
                         "measurements m JOIN configurations c ON c.id = m.configuration_id "
                         "ORDER BY m.id"):
        out.append([db[len(sys.argv[1]):]] + list(row))
print(json.dumps(out))
PY
}

"$tforge" sweep "$work/sweep.json" --out "$work/one" -q > "$work/one.txt" 2>&1 ||
  { bad "the sweep on 1 rank"; cat "$work/one.txt"; }
if "$tforge" sweep "$work/sweep.json" --out "$work/one" -q > "$work/again.txt" 2>&1; then
  bad "a second sweep into a sweep's folder without --resume was not refused"
elif grep -q "holds a sweep already: give --resume" "$work/again.txt"; then ok
else bad "the refusal of a second sweep"; cat "$work/again.txt"; fi

"$mpirun" -n 3 "$tforge" sweep "$work/sweep.json" --out "$work/three" -q \
  > "$work/three.txt" 2>&1 &
job=$!
# once some evaluations are committed, rank 2 is killed (-9): the job ends (MPI's rule)
victim=
for _ in $(seq 1 600); do
  n=$(rows "$work/three" 2>/dev/null | "$python" -c "import json,sys; print(len(json.load(sys.stdin)))" 2>/dev/null || echo 0)
  if [ "${n:-0}" -ge 3 ]; then
    for p in $(pgrep -f "tforge sweep $work/sweep.json"); do
      if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2; then victim=$p; fi
    done
    [ -n "$victim" ] && kill -9 "$victim"
    break
  fi
  sleep 0.5
done
wait $job
rc=$?
if [ -n "$victim" ] && [ "$rc" -ne 0 ]; then ok; else bad "rank 2 killed mid-sweep (pid '$victim', mpirun exit $rc)"; cat "$work/three.txt"; fi
rows "$work/three" > "$work/before.json"

"$mpirun" -n 3 "$tforge" sweep "$work/sweep.json" --out "$work/three" --resume -q \
  > "$work/resume.txt" 2>&1 || { bad "--resume after the kill"; cat "$work/resume.txt"; }
rows "$work/three" > "$work/after.json"
if "$python" - "$work/before.json" "$work/after.json" <<'PY'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:])
assert before, "nothing was committed before the kill"
assert all(r in after for r in before), "a committed row was lost or changed"
assert len(after) > len(before), "the resumed sweep evaluated nothing"
assert all('"device":' in (r[6] or "") for r in after), "a row without its device"
PY
then ok; else bad "rows committed before the kill kept, devices recorded"; fi

if "$python" - "$work/one" "$work/three" <<'PY'
import json, sys
one, three = sys.argv[1:]
s1, s3 = (json.load(open(d + "/sweep.json")) for d in (one, three))
assert [e["status"] for e in s3["entries"]] == ["done"] * 4, s3
assert [e["shape_values"] for e in s1["entries"]] == [e["shape_values"] for e in s3["entries"]]
for e in s1["entries"]:
    a, b = (json.load(open(d + "/" + e["result"])) for d in (one, three))
    hist = lambda r: [(h["config"], h["status"]) for h in r["history"]]
    assert hist(a) == hist(b), (e["result"], hist(a), hist(b))
    assert a["best"] == b["best"] and a["baseline"] == b["baseline"], e["result"]
PY
then ok; else bad "3 ranks (killed, resumed) against 1 rank: the same evaluations and winners"; fi

finish "sweep"
