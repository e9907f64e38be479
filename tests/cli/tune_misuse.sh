#!/usr/bin/env bash
# Misuse of `tune` found once the task is read (the embedded default's recording, replayed: no
# interpreter). `--resume` with one setting changed is refused (exit 2) naming that setting with
# its stored and its asked value, never the whole settings documents, and the stored run is left
# as it was; an --out that cannot be a folder is exit 2 naming it.
# usage: tune_misuse.sh TFORGE SOURCE_DIR RECORDED_SPACE
set -u
tforge=$1 source=$2 space=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
task=$source/experiments/kernels/matmul/task.json
cp "$space" "$work/a.json.gz"
cp "$space" "$work/b.json.gz"
failures=0 passed=0
base=(tune "$task" --budget 2 --out "$work/run" -q)

"$tforge" "${base[@]}" --backend "replay:$work/a.json.gz" >/dev/null 2>"$work/err.txt" ||
  { echo "FAIL: the first run"; cat "$work/err.txt"; exit 1; }

# refused CHANGED_PATTERN -- ARGS...: --resume with ARGS exits 2 naming the change alone
refused() {
  local pattern=$1
  shift 2
  "$tforge" "${base[@]}" --resume "$@" >/dev/null 2>"$work/err.txt"
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -Eq -- "has $pattern: run without --resume" "$work/err.txt" ||
     grep -q '{' "$work/err.txt"; then
    echo "FAIL: --resume $* -> exit $rc (want 2, naming '$pattern'):"; cat "$work/err.txt"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

a="replay:$work/a.json.gz"
refused "batch 1, this run asks for 2"                 -- --backend "$a" --batch 2
refused "backend $a, this run asks for replay:$work/b.json.gz" -- --backend "replay:$work/b.json.gz"
refused 'options \[\], this run asks for \["initial=3"\]' -- --backend "$a" --option initial=3
refused "patience \(none\), this run asks for 5"       -- --backend "$a" --patience 5
refused "transforms all, this run asks for none"      -- --backend "$a" --transforms none
refused "shape 0, this run asks for 1"                 -- --backend "$a" --shape 1
refused "check false, this run asks for true"         -- --backend "$a" --check

# the stored run is unchanged: the same settings resume it and evaluate nothing again
if "$tforge" "${base[@]}" --resume --backend "$a" --json >"$work/out.json" 2>"$work/err.txt" &&
   grep -q '"resumed":[[:space:]]*[1-9]' "$work/out.json"; then
  passed=$((passed + 1))
else
  echo "FAIL: the unchanged settings did not resume"; cat "$work/err.txt"; failures=$((failures + 1))
fi

# --out where no folder can be
: > "$work/afile"
for out in "$work/afile" "$work/afile/sub"; do
  "$tforge" tune "$task" --budget 1 --backend "$a" --out "$out" -q >/dev/null 2>"$work/err.txt"
  rc=$?
  if [ "$rc" -eq 2 ] && grep -Eq -- "--out $out: (not a folder|cannot create the folder: Not a directory)" "$work/err.txt"; then
    passed=$((passed + 1))
  else
    echo "FAIL: --out $out -> exit $rc (want 2):"; cat "$work/err.txt"; failures=$((failures + 1))
  fi
done

echo "tune misuse: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
