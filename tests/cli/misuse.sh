#!/usr/bin/env bash
# Command-line misuse: each refusal exits 2, names the option and what it expected, and comes
# before anything is created, read or measured (a task file that does not exist is never reached,
# no folder or store is left behind).
# usage: misuse.sh TFORGE RECORDED_SPACE
set -u
tforge=$1 space=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0 passed=0

# refuse PATTERN -- ARGS...: exit 2, stderr matches PATTERN, and the folder is as empty as before
refuse() {
  local pattern=$1
  shift 2
  "$tforge" "$@" >out.txt 2>err.txt
  local rc=$? left
  left=$(ls -A | grep -vx -e out.txt -e err.txt -e keep | tr '\n' ' ')
  if [ "$rc" -ne 2 ] || ! grep -Eq -- "$pattern" err.txt || [ -n "$left" ]; then
    echo "FAIL: tforge $* -> exit $rc (want 2), left: '$left', stderr:"; cat err.txt
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
  rm -f out.txt err.txt
}

# store export reads a store; one that is not there is named and never created
refuse 'new.db: no store there'              -- store export --store new.db --run 1 --out x.json
refuse "$work/a/b.db: no store there"         -- store export --store "$work/a/b.db" --run 1 --out x.json
mkdir keep
refuse 'keep: not a regular file'             -- store export --store keep --run 1 --out x.json
: > keep/empty.db
refuse 'empty.db: an empty file but not a tforge store' -- store export --store keep/empty.db --run 1 --out x.json
[ ! -s keep/empty.db ] && passed=$((passed + 1)) || { echo "FAIL: export wrote into an empty file"; failures=$((failures + 1)); }
rm -rf keep
refuse "--store expects a path, not ''"       -- store import "$space" --store ''
refuse "--out expects a path, not ''"         -- store export --store x.db --run 1 --out ''
refuse "--store given twice, as 'x.db' and as 'y.db'" -- store import "$space" --store x.db --store y.db

# tune: the plugins named and their options, checked against what the plugins publish, before
# the task is read
refuse "--transform-option x.y=z: no transform plugin 'x'" -- tune no-such-task.json --transform-option x.y=z
refuse "--transform-option pipeline.nope=1: transform pipeline has no option 'nope' \(it takes none" -- tune no-such-task.json --transform-option pipeline.nope=1
refuse "--transform-option pipeline.x=1: transform pipeline is not among --transforms none" -- tune no-such-task.json --transforms none --transform-option pipeline.x=1
refuse "--transform-option pipeline.x=1: transform pipeline is not among --transforms exp2" -- tune no-such-task.json --transforms exp2 --transform-option pipeline.x=1
refuse "--transform-option expects ID.KEY=VALUE, not 'pipeline=1'" -- tune no-such-task.json --transform-option pipeline=1
refuse "--transforms nonexistent: no transform plugin 'nonexistent' \(all, none, or ids" -- tune no-such-task.json --transforms nonexistent
refuse "--transforms exp2,nonexistent: no transform plugin 'nonexistent'" -- tune no-such-task.json --transforms exp2,nonexistent
refuse "--transforms 'exp2,': expected all, none or transform ids separated by commas" -- tune no-such-task.json --transforms exp2,
refuse "--transforms '': expected all, none or transform ids" -- tune no-such-task.json --transforms ''
refuse "--heuristic nonexistent: no heuristic plugin 'nonexistent'" -- tune no-such-task.json --heuristic nonexistent
refuse "--heuristic nonexistent: no heuristic plugin 'nonexistent'" -- tune no-such-task.json --heuristic nonexistent --strategy bo
refuse "--heuristic nonexistent: no heuristic plugin 'nonexistent'" -- tune no-such-task.json --heuristic nonexistent --backend replay:"$space"
refuse "--profiler-option nope=1: (profiler cupti has no option 'nope'|no profiler plugin is loaded)" -- tune no-such-task.json --profiler-option nope=1
refuse "--out expects a path, not ''"         -- tune no-such-task.json --out ''
refuse "--shape given twice, as 'all' and as '1': give it once" -- tune no-such-task.json --shape all --shape 1
refuse "--shape given twice, as '0' and as 'all'" -- tune no-such-task.json --shape 0 --shape all
refuse "--budget given twice, as '3' and as '4'" -- tune no-such-task.json --budget 3 --budget 4
refuse "--compile-workers expects an integer from 1 to 256, not '100000'" -- tune no-such-task.json --compile-workers 100000

# check, profile and transform: the same checks of the plugins they name
refuse "--transform-option x.y=z: no transform plugin 'x'" -- check no-such-task.json --transform-option x.y=z
refuse "--transforms nonexistent: no transform plugin 'nonexistent'" -- check no-such-task.json --transforms nonexistent --set a=1
refuse "--heuristic nonexistent: no heuristic plugin 'nonexistent'" -- profile no-such-task.json --heuristic nonexistent
refuse "--profiler-option nope=1: (profiler cupti has no option 'nope'|no profiler plugin is loaded)" -- profile no-such-task.json --profiler-option nope=1

refuse "--option x.y=z: no transform plugin 'x'" -- transform no-such-kernel.py --option x.y=z
refuse "--option pipeline.nope=1: transform pipeline has no option 'nope'" -- transform no-such-kernel.py --option pipeline.nope=1

# replay: a strategy's label, the heuristic whatever the strategies, paths
refuse "--strategy bo@: 'bo@' is not ID or ID@NAME" -- replay --cache "$space" --strategy bo@ --store r.db
refuse "--strategy random,@x: '@x' is not ID or ID@NAME" -- replay --cache "$space" --strategy random,@x
refuse "'bo@a@b' is not ID or ID@NAME"       -- replay --cache "$space" --strategy bo@a@b
refuse "--heuristic nonexistent: no heuristic plugin 'nonexistent'" -- replay --cache "$space" --strategy bo --heuristic nonexistent --store r.db
refuse "--store expects a path, not ''"       -- replay --cache "$space" --strategy bo --store ''
refuse "--plot expects a path, not ''"        -- replay --cache "$space" --strategy bo --plot ''
refuse "--seeds given twice, as '2' and as '3'" -- replay --cache "$space" --strategy bo --seeds 2 --seeds 3
refuse "--strategy random,bo,random: random is named twice" -- replay --cache "$space" --strategy random,bo,random
mkdir keep
refuse "--store keep: a folder, not a file"   -- replay --cache "$space" --strategy bo --store keep
refuse "--plot keep: a folder, not a file"    -- replay --cache "$space" --strategy bo --plot keep
refuse "keep: not a regular file"             -- store import "$space" --store keep
rm -rf keep
refuse "--plot no/x.svg: there is no folder no to write it in" -- replay --cache "$space" --strategy bo --plot no/x.svg
refuse "--out no/x.json: there is no folder no to write it in" -- store export --store x.db --run 1 --out no/x.json
refuse "no/x.db: cannot open or create a store there" -- store import "$space" --store no/x.db

# the same value twice is no contradiction
"$tforge" replay --cache "$space" --strategy random --seeds 1 --seeds 1 --budget 5 >/dev/null 2>&1 &&
  passed=$((passed + 1)) || { echo "FAIL: --seeds 1 --seeds 1 refused"; failures=$((failures + 1)); }

echo "misuse: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
