#!/usr/bin/env bash
# Hostile recordings given to `tforge replay --cache` and `tforge store import`: each is refused
# with exit 2 naming the file and the field, the same way by both (and the store is not created),
# and never waited on; one absurd time in a good cache changes neither its cut-offs nor a score.
# usage: hostile_recordings.sh TFORGE PYTHON RECORDED_SPACE FIXTURES
set -u
tforge=$1 python=$2 space=$3 fixtures=$4
. "$(dirname "$0")/../support/preamble.sh"

# refused WHAT FILE TEXT...: both commands exit 2 within 10 s, say each TEXT, and leave no store.
refused() {
  local what=$1 file=$2
  shift 2
  for cmd in replay import; do
    rm -f "$work/s.db"
    if [ $cmd = replay ]; then
      timeout 10 "$tforge" replay --cache "$file" --strategy random --seeds 2 -q \
        > /dev/null 2> "$work/err" < /dev/null
    else
      timeout 10 "$tforge" store import "$file" --store "$work/s.db" \
        > /dev/null 2> "$work/err" < /dev/null
    fi
    local rc=$? missing=
    for text in "$file" "$@"; do
      grep -qF -- "$text" "$work/err" || missing="$missing '$text'"
    done
    if [ $rc -ne 2 ]; then
      bad "$what, $cmd: exit $rc, expected 2: $(cat "$work/err")"
    elif [ -n "$missing" ]; then
      bad "$what, $cmd: the message lacks$missing: $(cat "$work/err")"
    elif [ -e "$work/s.db" ]; then
      bad "$what, $cmd: a store was created for a refused file"
    else
      ok
    fi
  done
}

mkfifo "$work/cache.fifo"
refused "a FIFO" "$work/cache.fifo" "not a regular file"
mkdir "$work/cache.d"
refused "a directory" "$work/cache.d" "not a regular file"
refused "a device" /dev/null "not a regular file"
refused "a key twice" "$fixtures/kt_duplicate_key.json" 'cache["16,0.5,fast"]' "twice"
refused "a T4 configuration twice" "$fixtures/t4_duplicate.json" "results[0] and results[3]" \
  "twice"
refused "an unknown objective" "$fixtures/kt_unknown_objective.json" "objective" '"GB/s"'
refused "an empty cache" "$fixtures/kt_empty_cache.json" "cache:" "no configuration"

# The same good cache with its worst time made absurd: the same cut-offs, traces and scores.
summary() {
  "$tforge" replay --cache "$1" --strategy random,annealing --seeds 5 --budget 30 --json -q \
    > "$work/doc.json" || return
  "$python" -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["cutoff_budgets"], d["run_budget"], d["median"], d["optimum"],
      [(s["score"], s["traces"], s["median"]) for s in d["strategies"]])' "$work/doc.json"
}
want=$(summary "$space") || bad "the clean cache: $want"
for outlier in 1e10 1e100; do
  "$python" - "$space" "$work/outlier.json" "$outlier" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
ok = [e for e in d["cache"].values() if isinstance(e["time"], (int, float))]
max(ok, key=lambda e: e["time"])["time"] = float(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
  got=$(summary "$work/outlier.json" 2> "$work/err")
  if [ $? -ne 0 ]; then
    bad "a worst time of $outlier: replay refused it: $(cat "$work/err")"
  elif [ "$got" != "$want" ]; then
    bad "a worst time of $outlier moved the cut-offs or the scores"
  else
    ok
  fi
done

finish "hostile recordings"
