#!/usr/bin/env bash
# Captures every probe file with `tforge capture`, checks included,
# and prints one line per capture: tasks written, how many passed their check, the failures.
# Usage: experiments/probe/capture_all.sh TFORGE PYTHON OUT. Files under @triton.autotune are
# captured twice: with one config (as the interpreter runs them) and with all (PROBE_MULTI=1).
set -u
absolute() { case $1 in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) command -v "$1" ;; esac; }
tforge=$(absolute "$1") python=$(absolute "$2") out=$(absolute "$3")
cd "$(dirname "${BASH_SOURCE[0]}")"
mkdir -p "$out"
summary() {
  "$python" - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("no report")
ts = d["tasks"]
bad = [(t["kernel"], t["check"], (t.get("check_message") or "")[:150]) for t in ts
       if t["check"] != "ok"]
print(f"{len(ts)} tasks, {len(ts) - len(bad)} ok", d.get("error") or "", bad or "")
PY
}
for f in *.py; do
  for multi in "" 1; do
    [ -z "$multi" ] || grep -q PROBE_MULTI "$f" || continue
    name=${f%.py}${multi:+_multi}
    PROBE_MULTI=$multi "$tforge" capture --json --out "$out/$name" -- "$python" "$f" \
      > "$out/$name.json" 2> "$out/$name.err"
    echo "$name: exit $?, $(summary "$out/$name.json")"
  done
done
