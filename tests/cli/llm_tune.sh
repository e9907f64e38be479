#!/usr/bin/env bash
# `tune --llm` in the interpreter with the canned model plugin: the model is asked when the
# incumbent stalls; a good rewrite is accepted, verified (checked in both orders) and its knobs
# tuned; a wrong one and one that does not compile end as failed candidates with their reason;
# one that imports os, one whose wrapper computes the answer with torch, one that caches its
# output, an answer with no code and an HTTP 429 end as refused proposals with theirs; result.json
# and report.md say which model, how many requests and tokens. Then `--llm-replay` in the same
# results folder, without the plugin, makes the same proposals with the same report lines. A
# tune without --llm has no `variant` and no model.
# usage: llm_tune.sh TFORGE SOURCE_DIR CANNED_MODULE_DIR
set -u
tforge=$1 source=$2 modules=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
task=$source/tests/fixtures/llm/task.json
common=(--backend interpret --strategy bo --budget 24 --patience 2 --llm-budget 9 --timeout 60
        --out "$work/run" -q)
fail() { echo "FAIL: $*"; exit 1; }

"$tforge" tune "$task" --plugin-dir "$modules" "${common[@]}" --llm canned \
  --llm-option "answers=$source/tests/fixtures/llm/answers.json" \
  --llm-option only=good,wrong,no_compile,imports_os,torch_computes,caches,no_code,rate_limited \
  >"$work/first.txt" 2>&1 || { cat "$work/first.txt"; fail "tune --llm canned failed"; }
cp "$work/run/result.json" "$work/first.json"
cp "$work/run/report.md" "$work/first.md"

python3 - "$work/first.json" "$work/first.md" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1])); md = open(sys.argv[2]).read()
llm = r["llm"]
assert llm["model"] == "canned" and not llm["replay"], llm["model"]
assert llm["requests"] == 9 and llm["prompt_tokens"] > 0 and llm["completion_tokens"] > 0, llm
assert llm["prompt"]["name"] == "kernel" and llm["prompt"]["digest"].startswith("fnv1a64:")
p = llm["proposals"]
def one(state, words):
    hits = [x for x in p if x["state"] == state and words in json.dumps(x)]
    assert hits, f"no {state} proposal with {words!r}: {json.dumps(p, indent=1)[:3000]}"
    return hits[0]
good = one("accepted", '"status": "ok"')
assert good["best_knobs"].startswith("BLOCK=") and good["diff"].startswith("--- a/rowsum.py")
assert "tl.sum" in good["diff"], good["diff"]
one("accepted", "max abs err")                 # wrong: a failed candidate, its max error
one("accepted", '"status": "compile"')         # does not compile: a failed candidate
one("refused", "imports os")
one("refused", "outside the kernel")           # the wrapper computes the answer with torch
one("refused", "_remember")                    # caches its output behind a decorator
one("refused", "no code block")
one("no answer", "HTTP 429")
assert sum(x.get("evaluations", 0) for x in p) >= 3, p  # each accepted one ran as a candidate
assert "## The model's proposals" in md and "Model `canned`: 9 requests" in md, md[-2000:]
for words in ("imports os", "no code block", "HTTP 429", "max abs err", "```diff"):
    assert words in md, words
PY

# the same run from the store alone: no plugin, no model
"$tforge" tune "$task" "${common[@]}" --llm-replay >"$work/replay.txt" 2>&1 ||
  { cat "$work/replay.txt"; fail "tune --llm-replay failed"; }
python3 - "$work/first.json" "$work/run/result.json" "$work/first.md" "$work/run/report.md" <<'PY' || exit 1
import json, re, sys
a, b = (json.load(open(f))["llm"] for f in sys.argv[1:3])
assert b["replay"] and b["replayed"] == b["requests"] == a["requests"], b
keys = ("state", "reason", "digest", "level", "asked_after", "verification", "best_knobs", "diff")
pa = [{k: x.get(k) for k in keys} for x in a["proposals"]]
pb = [{k: x.get(k) for k in keys} for x in b["proposals"]]
assert pa == pb, (pa, pb)
lines = lambda f: [l for l in open(f).read().split("## The model's proposals")[1].splitlines()
                   if re.match(r"\d+\. ", l)]
assert lines(sys.argv[3]) == lines(sys.argv[4]), (lines(sys.argv[3]), lines(sys.argv[4]))
PY

# without --llm nothing of it
"$tforge" tune "$task" --backend interpret --strategy bo --budget 2 --out "$work/plain" -q \
  >"$work/plain.txt" 2>&1 || { cat "$work/plain.txt"; fail "tune without --llm failed"; }
python3 - "$work/plain/result.json" "$work/plain/report.md" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1])); md = open(sys.argv[2]).read()
assert "llm" not in r and "variant" not in md and "model's proposals" not in md, r.keys()
PY
echo "llm_tune: passed"
