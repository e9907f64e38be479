#!/usr/bin/env bash
# The command line's contract: exit codes, --help, --version, --json, usage errors.
# usage: cli.sh TFORGE FIXTURE_PLUGIN_DIR PYTHON RECORDED_SPACE
set -u
tforge=$1 fixtures=$2 python=$3 space=$4
failures=0 passed=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect CODE PATTERN -- ARGS...: the exit status is CODE and stdout+stderr match PATTERN
expect() {
  local code=$1 pattern=$2
  shift 3
  "$tforge" "$@" >"$out" 2>"$err"
  local rc=$?
  if [ "$rc" -ne "$code" ] || ! cat "$out" "$err" | grep -Eq -- "$pattern"; then
    echo "FAIL: tforge $* -> exit $rc (want $code), output:"; cat "$out" "$err"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

expect 2 'usage: tforge'                -- 
expect 0 '^tforge [0-9]+\.[0-9]+\.[0-9]+ \(plugin ABI 1\.' -- --version
expect 0 'commands:'                    -- --help
expect 0 'usage: tforge plugins'        -- help plugins
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 'unknown option or missing value: --frob' -- plugins --frob
expect 2 "unexpected argument 'extra'"  -- plugins extra
expect 2 'unknown option or missing value: --plugin-dir' -- plugins --plugin-dir
expect 0 'usage: tforge plugins'        -- plugins --help
expect 0 'usage: tforge tune'           -- tune --help
expect 2 'bench-proposer: takes no arguments' -- bench-proposer extra
expect 0 'usage: tforge bench-proposer' -- bench-proposer --help
expect 2 'cache FILE is required'       -- replay --strategy random
expect 2 'expects a positive integer'   -- replay --cache "$space" --strategy random --budget 0
expect 2 'no-such-file.json'            -- replay --cache no-such-file.json --strategy random
expect 2 "no strategy plugin with id 'nonesuch'" -- replay --cache "$space" --strategy nonesuch
expect 2 "option 'bogus'"               -- replay --cache "$space" --strategy annealing --option annealing.bogus=1
expect 0 'p_within_5pct'                -- replay --cache "$space" --strategy random,pattern --seeds 3
expect 2 "option 'kapa' \(it takes acquisition, kernel" -- replay --cache "$space" --strategy bo --option bo.kapa=1
expect 2 "'min' is not one of the strategies asked for \(bo\)" -- replay --cache "$space" --strategy bo --option min.local=0.3
expect 2 "option cooling is '2', expected a number in \[0.5, 1\]" -- replay --cache "$space" --strategy annealing --option annealing.cooling=2
expect 2 "expected ids separated by commas" -- replay --cache "$space" --strategy ''
expect 2 "expected ids separated by commas" -- replay --cache "$space" --strategy random,
expect 2 "no strategy named"             -- tune no-such-task.json --strategy ''
expect 2 "has no option 'kapa'"          -- tune no-such-task.json --option kapa=1
expect 0 '^annealing@hot +[0-9.-]+ ' -- replay --cache "$space" --strategy annealing,annealing@hot --option annealing@hot.t0=5 --seeds 2
expect 2 "option 'bogus'"               -- replay --cache "$space" --strategy annealing@x --option annealing@x.bogus=1
expect 2 "seed expects an integer from 0 to 18446744073709551615, not '-1'" -- tune no-such-task.json --seed -1
refused=$(mktemp -u).db
expect 2 "option 'bogus'"               -- replay --cache "$space" --strategy annealing --option annealing.bogus=1 --store "$refused"
if [ ! -e "$refused" ]; then passed=$((passed + 1)); else echo "FAIL: a refused option left a store"; failures=$((failures + 1)); fi
rm -f "$refused"
expect 0 'warn: --plugin-dir /no/such/folder: No such file' -- plugins --plugin-dir /no/such/folder
expect 0 '^ +level +3 +integer in \[1, 9\] +how much nothing' -- plugins --options --plugin-dir "$fixtures"
expect 0 '^ +neighbour_ls +0.75 '         -- plugins --options
expect 0 'good-transform'               -- plugins --plugin-dir "$fixtures"
expect 0 'built for plugin ABI 2\.0'    -- plugins --plugin-dir "$fixtures"

# recorded spaces as they are in the wild: booleans, runs of several kernels, a rate objective
wild=$(dirname "$space")/../../tests/fixtures/recording/kt_wild.json
expect 0 'objective GFLOP/s \(higher is better\): optimum 300, median 200' -- replay --cache "$wild" --strategy exhaustive --seeds 1
expect 0 'objective time \(lower is better\): optimum 0.5 ms' -- replay --cache "$wild" --strategy exhaustive --seeds 1 --objective time
expect 0 'objective GFLOP/s \(lower is better\): optimum 100,' -- replay --cache "$wild" --strategy exhaustive --seeds 1 --objective GFLOP/s:min
expect 2 'objective bogus: the recording has no such metric \(it has time, GFLOP/s\)' -- replay --cache "$wild" --strategy random --objective bogus
expect 2 'noise draws recorded runs of time; the objective is GFLOP/s' -- replay --cache "$wild" --strategy random --noise

# a recording in which nothing ran is well formed, but the work cannot be done: exit 1
nothing=$(mktemp -u).json
"$python" - "$space" "$nothing" <<'PY'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1]))
for entry in doc["cache"].values():
    entry["time"] = "RuntimeFailedConfig"
json.dump(doc, open(sys.argv[2], "w"))
PY
expect 1 'none of its 768 configurations ran correctly' -- replay --cache "$nothing" --strategy random
rm -f "$nothing"

# a lab run exported from its store keeps the individual runs: --noise has them to draw from
lab=$(mktemp -u).db
expect 0 'p_within_5pct' -- replay --cache "$space" --strategy random --seeds 1 --budget 10 --store "$lab"
expect 0 'exported run 1 \(' -- store export --store "$lab" --run 1 --out "$lab.json"
if "$python" -c "import json, sys; d = json.load(open(sys.argv[1]))
assert all(len(e['times']) > 1 for e in d['cache'].values() if isinstance(e['time'], float)), d" "$lab.json"
then passed=$((passed + 1)); else echo "FAIL: exported lab run lost its times"; failures=$((failures + 1)); fi
expect 0 'p_within_5pct' -- replay --cache "$lab.json" --strategy random --seeds 2 --budget 3 --noise
rm -f "$lab" "$lab"-* "$lab.json"

# --json records each strategy's version and effective options, defaults included
"$tforge" replay --cache "$space" --strategy annealing --option annealing.t0=0.2 --seeds 1 --json >"$out" 2>"$err"
if "$python" -c "import json, sys; s = json.load(open(sys.argv[1]))['strategies'][0]
assert s['version'] == '1.0.0' and s['options'] == {'t0': '0.2', 't_min': '0.001', 'cooling': '', 'patience': '50'}, s" "$out"
then passed=$((passed + 1)); else echo "FAIL: replay --json options"; cat "$out" "$err"; failures=$((failures + 1)); fi

# store: import a recorded space, export it in both formats, and replay what came out
db=$(mktemp -u).db
expect 0 'imported 768 configurations'  -- store import "$space" --store "$db"
expect 0 'exported run 1 \(768'          -- store export --store "$db" --run 1 --out "$db.json.gz"
expect 0 'exported run 1 \(768'          -- store export --store "$db" --run 1 --out "$db.t4.json" --format t4
expect 0 '768 configurations \(768 ok\)' -- replay --cache "$db.json.gz" --strategy random --seeds 2
expect 0 '768 configurations \(768 ok\)' -- replay --cache "$db.t4.json" --strategy random --seeds 2
expect 2 'run 9 does not exist'         -- store export --store "$db" --run 9 --out "$db.x.json"
expect 2 'expected import or export'    -- store list --store "$db"
rm -f "$db" "$db"-* "$db.json.gz" "$db.t4.json"

# --json is one document with the fixtures' plugins and refusals
"$tforge" plugins --json --plugin-dir "$fixtures" >"$out" 2>"$err"
if "$python" - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ids = {(p["kind"], p["id"]) for p in doc["plugins"]}
assert ("strategy", "good") in ids and ("transform", "good-transform") in ids, ids
assert ("test.widget", "good-widget") in ids, ids  # a kind is its interface id: any kind lists
reasons = {r["path"].rsplit("/", 1)[-1]: r["reason"] for r in doc["refused"]}
assert "ABI 2.0" in reasons["fixture-b-abi2.so"], reasons
assert "not <kind>/<revision>" in reasons["fixture-h-nokind.so"], reasons
assert len(reasons) == 7, reasons
good = next(p for p in doc["plugins"] if p["id"] == "good")
assert [o["name"] for o in good["options"]] == ["level", "mode"], good
assert good["options"][1] == {"name": "mode", "type": "choice", "default": "calm",
                              "choices": "calm|eager", "doc": "how to propose it"}, good
PY
then passed=$((passed + 1)); else echo "FAIL: plugins --json"; cat "$out"; failures=$((failures + 1)); fi

echo "cli: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
