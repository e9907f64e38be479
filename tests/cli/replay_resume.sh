#!/usr/bin/env bash
# `tforge replay --store` killed with SIGKILL mid-way resumes with every finished evaluation
# kept, evaluates only what is missing, and ends with the results of an uninterrupted run.
# usage: replay_resume.sh TFORGE PYTHON RECORDED_SPACE
set -u
tforge=$1 python=$2 space=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(replay --cache "$space" --strategy annealing,random --seeds 200 --budget 100 --json)
fail() { echo "FAIL: $*"; echo "replay resume: 0 passed, 1 failed"; exit 1; }

"$tforge" "${args[@]}" > "$work/plain.json" || fail "the run without a store"
"$tforge" "${args[@]}" --store "$work/runs.db" > /dev/null &
pid=$!
sleep 1
kill -KILL "$pid" 2>/dev/null || fail "the run ended before it could be killed: make it longer"
wait "$pid" 2>/dev/null
count() { "$python" -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
print(c.execute('pragma integrity_check').fetchone()[0], \
c.execute('select count(*) from measurements').fetchone()[0])" "$work/runs.db"; }
read -r integrity before < <(count)
[ "$integrity" = ok ] || fail "integrity_check after the kill: $integrity"
[ "$before" -gt 0 ] && [ "$before" -lt 40000 ] || fail "$before rows after the kill"
"$tforge" "${args[@]}" --store "$work/runs.db" > "$work/resumed.json" || fail "the resumed run"
read -r integrity after < <(count)
[ "$integrity" = ok ] && [ "$after" -eq 40000 ] || fail "$after rows after resuming ($integrity)"
"$python" - "$work/plain.json" "$work/resumed.json" <<'PY' || fail "resumed results differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for x, y in zip(a["strategies"], b["strategies"]):
    assert x["traces"] == y["traces"] and x["score"] == y["score"], x["strategy"]
PY
echo "killed after $before of 40000 evaluations; resumed to $after"
echo "replay resume: 1 passed, 0 failed"
