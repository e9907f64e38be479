"""The openai plugin and the host's door, as a user runs them (`tforge llm ask`), against the
fake server (fake_openai.py, loopback, started here): every scripted fault ends as an answer with
a clear error and exit 1, never a crash; retries are counted by the server and Retry-After is
waited; the key reaches the server but no output, log or store; --llm-replay serves the stored
answers with the server gone; the usage sums the answers' tokens.
usage: transport.py TFORGE SOURCE_DIR"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

tforge, src = sys.argv[1], sys.argv[2]
server_py = os.path.join(src, "tests", "llm", "fake_openai.py")
plugin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tforge))), "lib",
                          "tforge", "plugins")
KEY = "sk-test-0123456789abcdef-never-shown"
work = tempfile.mkdtemp(prefix="tforge-llm-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


class Server:
    def __init__(self, script):
        path = os.path.join(work, f"script{time.monotonic_ns()}.json")
        with open(path, "w") as f:
            json.dump(script, f)
        env = dict(os.environ, TF_LLM_TEST_KEY=KEY)
        self.proc = subprocess.Popen([sys.executable, server_py, path], stdout=subprocess.PIPE,
                                     env=env, text=True)
        self.port = int(self.proc.stdout.readline())
        self.endpoint = f"http://127.0.0.1:{self.port}/v1"

    def stats(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats") as r:
            return json.load(r)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def ask(options, prompt="make it faster", extra=(), env_key=False, replay=False, store=None):
    prompt_file = os.path.join(work, "prompt.txt")
    with open(prompt_file, "w") as f:
        f.write(prompt)
    cmd = [tforge, "llm", "ask", "--plugin-dir", plugin_dir, "--prompt-file", prompt_file,
           "--json", "-v", "-v", "-v"]
    if replay:
        cmd.append("--llm-replay")
    if options is not None:
        cmd += ["--llm", "openai"]
        for o in options:
            cmd += ["--llm-option", o]
    if store:
        cmd += ["--store", store]
    cmd += list(extra)
    env = dict(os.environ)
    env.pop("TF_LLM_TEST_KEY", None)
    if env_key:
        env["TF_LLM_TEST_KEY"] = KEY
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    took = time.monotonic() - start
    for name, text in (("stdout", p.stdout), ("stderr", p.stderr)):
        check(KEY not in text, f"the key appears in {name} of {cmd}")
    doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
    return p, doc, took


def scenario(name, script, options=(), **kw):
    print("---", name, flush=True)
    s = Server(script)
    try:
        p, doc, took = ask([f"endpoint={s.endpoint}", "retry_wait_max=5"] + list(options), **kw)
        return s.stats(), p, doc, took
    finally:
        s.stop()


def error_of(doc):
    return doc["answers"][0].get("error", "") if doc else ""


store = os.path.join(work, "llm.db")

# A good answer, stored; its usage read.
stats, p, doc, _ = scenario("ok", {"entries": [{"responses": [
    {"content": "def kernel(): pass", "usage": [11, 22]}]}]}, store=store,
    options=["model=tiny", "seed=7"])
check(p.returncode == 0, f"ok: exit {p.returncode}: {p.stderr}")
check(doc and doc["answers"][0].get("text") == "def kernel(): pass", f"ok: answer {doc}")
check(doc and doc["model"] == "tiny", "ok: the model's name")
check(doc and doc["usage"]["prompt_tokens"] == 11 and doc["usage"]["completion_tokens"] == 22,
      f"ok: usage {doc and doc['usage']}")
check(stats["requests"] == 1 and stats["seen"][0]["seed"] == 7 and
      stats["seen"][0]["model"] == "tiny", f"ok: the server saw {stats}")

# The same request replayed with the server gone; another one is not in the store.
print("--- replay", flush=True)
p, doc, _ = ask(["endpoint=http://127.0.0.1:9/v1", "model=tiny", "seed=7"], replay=True,
                store=store)
check(p.returncode == 0 and doc and doc["answers"][0].get("text") == "def kernel(): pass",
      f"replay: {p.returncode} {doc} {p.stderr}")
check(doc and doc["usage"]["replayed"] == 1 and doc["usage"]["prompt_tokens"] == 11,
      f"replay: usage {doc and doc['usage']}")
p, doc, _ = ask(None, replay=True, store=store)  # no plugin: the store's latest model
check(p.returncode == 0 and doc and doc["answers"][0].get("text") == "def kernel(): pass",
      f"replay without a plugin: {p.returncode} {doc} {p.stderr}")
p, doc, _ = ask(None, prompt="another prompt", replay=True, store=store)
check(p.returncode == 1 and error_of(doc) == "not in the store (--llm-replay)",
      f"replay of a request not stored: {p.returncode} {doc}")

# 429 with Retry-After, twice, then an answer: three requests, two waits of a second.
stats, p, doc, took = scenario("429 then ok", {"entries": [{"responses": [
    {"status": 429, "retry_after": "1"}, {"status": 429, "retry_after": "1"},
    {"content": "ok after waiting"}]}]}, options=["retries=3"])
check(p.returncode == 0 and doc["answers"][0].get("text") == "ok after waiting",
      f"429: {p.returncode} {doc}")
check(stats["requests"] == 3, f"429: the server saw {stats['requests']} requests, not 3")
gaps = [b["at"] - a["at"] for a, b in zip(stats["seen"], stats["seen"][1:])]
check(all(g >= 0.9 for g in gaps), f"429: Retry-After not waited: gaps {gaps}")

# 429 for ever: 1 + retries requests, then the error says so; Retry-After capped.
stats, p, doc, took = scenario("429 always", {"entries": [{"responses": [
    {"status": 429, "retry_after": "100", "message": "slow down"}]}]},
    options=["retries=2", "retry_wait_max=0.2"])
check(p.returncode == 1 and error_of(doc) == "HTTP 429, 3 tries: slow down",
      f"429 always: {p.returncode} {error_of(doc)}")
check(stats["requests"] == 3 and took < 10, f"429 always: {stats['requests']} requests, {took} s")

# 500: retried with backoff, then the error.
stats, p, doc, _ = scenario("500", {"entries": [{"responses": [
    {"status": 500, "message": "boom"}]}]}, options=["retries=1", "retry_wait_max=0.1"])
check(p.returncode == 1 and error_of(doc) == "HTTP 500, 2 tries: boom", f"500: {error_of(doc)}")
check(stats["requests"] == 2, f"500: {stats['requests']} requests, not 2")

# A 4xx is not retried.
stats, p, doc, _ = scenario("400", {"entries": [{"responses": [
    {"status": 400, "message": "bad request"}]}]})
check(error_of(doc) == "HTTP 400, 1 try: bad request" and stats["requests"] == 1,
      f"400: {error_of(doc)} after {stats['requests']} requests")

# A hang past the timeout.
stats, p, doc, took = scenario("hang", {"entries": [{"responses": [
    {"hang": 6, "content": "too late"}]}]}, options=["timeout=1"])
check(p.returncode == 1 and error_of(doc) == "timed out after 1 s" and took < 5,
      f"hang: {error_of(doc)} in {took} s")

# Malformed JSON, a choice without content, no choices.
stats, p, doc, _ = scenario("malformed", {"entries": [{"responses": [{"raw": "{\"choices\": ["}]}]})
check(p.returncode == 1 and error_of(doc).startswith("malformed JSON: not a JSON document"),
      f"malformed: {error_of(doc)}")
stats, p, doc, _ = scenario("no content", {"entries": [{"responses": [{"no_content": True}]}]})
check(p.returncode == 1 and error_of(doc) == "no content (finish_reason length)",
      f"no content: {error_of(doc)}")
stats, p, doc, _ = scenario("no choices", {"entries": [{"responses": [{"raw": "{}"}]}]})
check(error_of(doc) == "malformed JSON: no \"choices\"", f"no choices: {error_of(doc)}")

# Nobody listening.
print("--- refused", flush=True)
with socket.socket() as sock:  # a port that was free a moment ago
    sock.bind(("127.0.0.1", 0))
    closed = sock.getsockname()[1]
p, doc, _ = ask([f"endpoint=http://127.0.0.1:{closed}/v1"])
check(p.returncode == 1 and error_of(doc).startswith("Couldn't connect to server"),
      f"refused: {p.returncode} {error_of(doc)}")

# The key: carried to the server, never shown, stored or logged, even when the server echoes it.
key_store = os.path.join(work, "key.db")
stats, p, doc, _ = scenario("key", {"key_env": "TF_LLM_TEST_KEY", "entries": [
    {"match": "echo", "responses": [{"echo_key": True}]},
    {"responses": [{"content": "with a key"}]}]}, options=["key_env=TF_LLM_TEST_KEY"],
    env_key=True, store=key_store)
check(p.returncode == 0 and stats["seen"][0]["auth"] == "ok", f"key: not carried: {stats}")
stats, p, doc, _ = scenario("key echoed", {"key_env": "TF_LLM_TEST_KEY", "entries": [
    {"responses": [{"echo_key": True}]}]}, options=["key_env=TF_LLM_TEST_KEY"], env_key=True,
    store=key_store, prompt="echo it")
check(p.returncode == 1 and error_of(doc).startswith("HTTP 401, 1 try: bad key ****"),
      f"key echoed: {error_of(doc)}")
for name in os.listdir(work):
    with open(os.path.join(work, name), "rb") as f:
        check(KEY.encode() not in f.read(), f"the key is in {name}")
p, doc, _ = ask([f"endpoint=http://127.0.0.1:{closed}/v1", "key_env=TF_LLM_TEST_KEY"])
check(p.returncode == 2 and "key_env" in p.stderr and doc is None,
      f"key variable unset: {p.returncode} {p.stderr}")
p, doc, _ = ask([])
check(p.returncode == 2 and "no endpoint" in p.stderr, f"no endpoint: {p.returncode} {p.stderr}")
p, doc, _ = ask(["endpoint=x", "tempertaure=1"])
check(p.returncode == 2 and "tempertaure" in p.stderr, f"a mistyped option: {p.stderr}")

# Several answers: by `n`; by one request each where the server ignores n (seeds apart); in
# parallel; the usage sums every answer's tokens.
three = {"entries": [{"responses": [{"content": ["a", "b", "c"], "usage": [5, 7]}]}]}
stats, p, doc, _ = scenario("n", three, extra=["--answers", "3"])
check([a.get("text") for a in doc["answers"]] == ["a", "b", "c"] and stats["requests"] == 1,
      f"n: {doc['answers']} in {stats['requests']} requests")
check(doc["usage"]["prompt_tokens"] == 5 and doc["usage"]["completion_tokens"] == 7,
      f"n: usage {doc['usage']}")
ignoring = {"ignore_n": True, "entries": [{"responses": [{"content": "x", "usage": [5, 7]}]}]}
stats, p, doc, _ = scenario("n ignored", ignoring, extra=["--answers", "3", "--seed", "40"])
check(len(doc["answers"]) == 3 and stats["requests"] == 3, f"n ignored: {stats}")
check([s["seed"] for s in stats["seen"]] == [40, 41, 42], f"n ignored: seeds {stats['seen']}")
check(doc["usage"]["prompt_tokens"] == 15 and doc["usage"]["completion_tokens"] == 21 and
      doc["usage"]["answers"] == 3, f"n ignored: usage {doc['usage']}")
slow = {"ignore_n": True, "entries": [{"responses": [{"hang": 1, "content": "x"}]}]}
stats, p, doc, took = scenario("parallel", slow, options=["parallel=3"], extra=["--answers", "3"])
check(len(doc["answers"]) == 3 and stats["requests"] == 3 and took < 2.8,
      f"parallel: {stats['requests']} requests in {took} s")
check(all(s["n"] == 1 for s in stats["seen"]), "parallel: each request asks one answer")

# Usage: the verb, a replay without its store, the help.
for args, status, words in ((["llm"], 2, "expected ask"),
                            (["llm", "ask", "--llm-replay", "--prompt-file", "x"], 2, "--store"),
                            (["llm", "ask", "--llm", "nosuch", "--prompt-file", server_py], 2,
                             "no such model plugin"),
                            (["llm", "ask", "--help"], 0, "usage: tforge llm ask")):
    p = subprocess.run([tforge] + args, capture_output=True, text=True)
    check(p.returncode == status and words in p.stdout + p.stderr,
          f"{args}: exit {p.returncode}: {p.stdout} {p.stderr}")

# The options are listed, the texts as text.
p = subprocess.run([tforge, "plugins", "--options", "--plugin-dir", plugin_dir],
                   capture_output=True, text=True)
check("openai" in p.stdout and "endpoint" in p.stdout and "key_env" in p.stdout,
      f"plugins --options: {p.stdout}")

shutil.rmtree(work)
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
