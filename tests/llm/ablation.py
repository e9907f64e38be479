"""experiments/llm/ablation.py as a user runs it, against the fake server (fake_openai.py,
loopback, started here) serving the canned good rewrite: one small task in the interpreter,
rules only and rules plus the model; the table has both rows, the model's row its proposal made
and verified and what asking cost; the key named by KEY_ENV reaches the server and no output.
usage: ablation.py TFORGE SOURCE_DIR"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

tforge, src = sys.argv[1], sys.argv[2]
KEY = "sk-ablation-test-never-shown"
work = tempfile.mkdtemp(prefix="tforge-ablation-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
answers = json.load(open(os.path.join(src, "tests", "fixtures", "llm", "answers.json")))
good = next(a for a in answers if a["name"] == "good")
script = os.path.join(work, "script.json")
with open(script, "w") as f:
    json.dump({"key_env": "TF_ABLATION_KEY", "entries": [
        {"responses": [{"content": good["text"], "usage": [1200, 310]}]}]}, f)
server = subprocess.Popen([sys.executable, os.path.join(src, "tests", "llm", "fake_openai.py"),
                           script], stdout=subprocess.PIPE, text=True,
                          env=dict(os.environ, TF_ABLATION_KEY=KEY))
try:
    port = int(server.stdout.readline())
    env = dict(os.environ, ENDPOINT=f"http://127.0.0.1:{port}/v1", MODEL="fake-model",
               KEY_ENV="TF_ABLATION_KEY", TF_ABLATION_KEY=KEY, BACKEND="interpret",
               BUDGET="6", PATIENCE="2", LLM_BUDGET="1", SEED="3", TUNE_TIMEOUT="600")
    task = os.path.join(src, "tests", "fixtures", "llm", "task.json")
    p = subprocess.run([sys.executable, os.path.join(src, "experiments", "llm", "ablation.py"),
                        tforge, os.path.join(work, "out"), task],
                       capture_output=True, text=True, env=env, timeout=1200)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
        stats = json.load(r)
finally:
    server.terminate()
    server.wait()
print(p.stdout, p.stderr, sep="\n")
assert p.returncode == 0, f"ablation.py exited {p.returncode}"
assert KEY not in p.stdout + p.stderr, "the key appears in the output"
md = open(os.path.join(work, "out", "ablation.md")).read()
assert md.strip() in p.stdout, "the printed tables differ from ablation.md"
rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in md.splitlines() if line.startswith("| rules")}
assert set(rows) == {"rules", "rules + model"}, rows
# best ms, speedup, evaluations, made, verified, won, requests, tokens, model s, tune s
rules, model = rows["rules"], rows["rules + model"]
assert rules[3:9] == ["-"] * 6 and int(rules[2]) >= 1, rules
assert model[3:5] == ["1", "1"] and model[6:8] == ["1", "1200 + 310"], model
assert "the backend does not time" in md, md
doc = json.load(open(os.path.join(work, "out", "ablation.json")))
arms = doc["tasks"]["llm"]
assert arms["model"]["model"] == "fake-model" and arms["model"]["verified"] == 1, arms
assert "made" not in arms["rules"], arms["rules"]
result = json.load(open(os.path.join(work, "out", "llm", "model", "result.json")))
assert result["seed"] == 3 and result["strategy"] == "bo", result["seed"]
assert stats["requests"] == 1 and stats["seen"][0]["auth"] == "ok", stats
assert stats["seen"][0]["model"] == "fake-model", stats
print("ablation: passed")
