"""`tune --strategy forge --llm openai` in the interpreter against the fake OpenAI-compatible
server (tests/llm/fake_openai.py, loopback, started here), as a user runs it: the row sum's
baseline is labelled tail-effect (a grid short of one wave) and no move of its space (BLOCK,
num_warps) favours anything not yet measured, so when the incumbent stalls forge asks the model
once (--llm-budget 1); the model is shown the incumbent's labels; its rewrite is accepted,
verified and tuned; result.json says why it was asked and keeps the model's diagnosis beside the
rules' labels (the incumbent's profile), and report.md shows both. Resumed, the run decides at
the same stall, takes the proposal from the store and asks nothing.
usage: llm_forge.py TFORGE SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

tforge, src = sys.argv[1], sys.argv[2]
plugin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tforge))), "lib",
                          "tforge", "plugins")
task = os.path.join(src, "tests", "fixtures", "llm", "task.json")
work = tempfile.mkdtemp(prefix="tforge-llm-forge-")
answers = json.load(open(os.path.join(src, "tests", "fixtures", "llm", "answers.json")))
good = next(a["text"] for a in answers if a["name"] == "good")
diagnosis = good.split("```")[0].strip()
script = os.path.join(work, "script.json")
with open(script, "w") as f:
    json.dump({"entries": [{"responses": [{"content": good, "usage": [100, 50]}]}]}, f)
server = subprocess.Popen([sys.executable, os.path.join(src, "tests", "llm", "fake_openai.py"),
                           script], stdout=subprocess.PIPE, text=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


try:
    port = int(server.stdout.readline())
    out = os.path.join(work, "run")
    cmd = [tforge, "tune", task, "--plugin-dir", plugin_dir, "--backend", "interpret",
           "--strategy", "forge", "--transforms", "none", "--budget", "6", "--patience", "2",
           "--timeout", "60", "--llm", "openai", "--llm-option",
           f"endpoint=http://127.0.0.1:{port}/v1", "--llm-option", "model=fake",
           "--llm-budget", "1", "--out", out, "-q"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TRITON_INTERPRET="1"))
    check(p.returncode == 0, f"tune failed ({p.returncode}): {p.stdout[-2000:]} {p.stderr[-2000:]}")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
        stats = json.load(r)
    r = json.load(open(os.path.join(out, "result.json")))
    md = open(os.path.join(out, "report.md")).read()
    check(r["strategy"] == "forge", r["strategy"])
    check(stats["requests"] == 1, f"the server saw {stats['requests']} requests")
    check("tail-effect" in stats["seen"][0]["user"], "the prompt does not show the label")
    llm = r["llm"]
    check(llm["asked"] == 1 and llm["requests"] == 1, json.dumps(llm)[:500])
    proposal = llm["proposals"][0]
    check(proposal["state"] == "accepted", proposal["state"])
    check(proposal["verification"]["status"] == "ok", json.dumps(proposal)[:800])
    check(proposal["evaluations"] >= 1, "the proposal never ran")
    because = proposal.get("asked_because", "")
    check(because.startswith("tail-effect (waves") and "no open move addresses it" in because,
          because)
    check(proposal["diagnosis"] == diagnosis, proposal["diagnosis"])
    profile = [x for x in r["profile"]["profiles"] if x["evaluation"] == proposal["incumbent"]]
    check(len(profile) == 1, f"no profile of the incumbent {proposal['incumbent']}")
    if profile:
        check([x["label"] for x in profile[0]["labels"]] == ["tail-effect"], profile[0]["labels"])
        check(profile[0].get("model_diagnosis") == [diagnosis], profile[0].get("model_diagnosis"))
    check("(the incumbent's label tail-effect (waves" in md, md[-2500:])
    check(f"The model's diagnosis: {diagnosis}" in md, md[-2500:])

    p = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TRITON_INTERPRET="1"))
    check(p.returncode == 0, f"resume failed ({p.returncode}): {p.stderr[-2000:]}")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as reply:
        check(json.load(reply)["requests"] == 1, "the resumed run asked the model")
    again = json.load(open(os.path.join(out, "result.json")))
    check(again["resumed"] == r["evaluations"] == again["evaluations"],
          f"resumed {again['resumed']} of {again['evaluations']}, first {r['evaluations']}")
    taken = again["llm"]["proposals"]
    check(len(taken) == 1 and taken[0]["from_store"] and
          taken[0]["digest"] == proposal["digest"], json.dumps(taken)[:800])
finally:
    server.terminate()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
print("ok" if not failures else f"{len(failures)} failed")
sys.exit(1 if failures else 0)
