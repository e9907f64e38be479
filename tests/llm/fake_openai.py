"""A fake OpenAI-compatible chat-completions server for the tests: loopback only, port 0, the
port printed on the first line of stdout. It serves recorded answers from a JSON script and
scripted faults, and tells what it saw at GET /stats.

usage: fake_openai.py SCRIPT.json

The script: {"ignore_n": false, "key_env": "NAME" (the key the requests must carry, read from
that variable; absent: none expected), "entries": [ENTRY, ...]}. A request takes the first entry
whose "match" is a substring of its user message, else the first entry without "match". An
entry's "responses" are served one a request, in order, the last one again and again:
  {"content": "TEXT" or ["TEXT", ...] (one a choice), "usage": [PROMPT, COMPLETION]}
  {"status": 429 or 500 ..., "retry_after": "SECONDS" (optional), "message": "..."}
  {"hang": SECONDS, ...}     sleeps first, then serves the rest of the response
  {"raw": "TEXT"}            HTTP 200 with this body as it is (malformed JSON)
  {"no_content": true}       a choice whose message has no content (finish_reason "length")
  {"echo_key": true}         HTTP 401 whose message repeats the key the request carried
/stats: {"requests": N, "seen": [{"user": ..., "n": ..., "seed": ..., "auth": "ok" | "none" |
"wrong", "at": seconds since start}, ...]}."""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
expected_key = os.environ.get(script["key_env"]) if script.get("key_env") else None
lock = threading.Lock()
seen = []
served = {}  # entry index -> responses served
start = time.monotonic()


def pick(user):
    entries = script["entries"]
    for i, e in enumerate(entries):
        if "match" in e and e["match"] in user:
            return i
    for i, e in enumerate(entries):
        if "match" not in e:
            return i
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the test reads /stats
        pass

    def send(self, status, body, headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing to tell it

    def do_GET(self):
        if self.path != "/stats":
            return self.send(404, json.dumps({"error": {"message": "no such page"}}))
        with lock:
            self.send(200, json.dumps({"requests": len(seen), "seen": seen}))

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/chat/completions":
            return self.send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
        request = json.loads(body)
        user = next((m["content"] for m in request["messages"] if m["role"] == "user"), "")
        auth = self.headers.get("Authorization")
        carried = auth[len("Bearer "):] if auth and auth.startswith("Bearer ") else None
        with lock:
            seen.append({"user": user, "n": request.get("n", 1), "seed": request.get("seed"),
                         "model": request.get("model"),
                         "auth": "none" if carried is None else
                         "ok" if carried == expected_key else "wrong",
                         "at": time.monotonic() - start})
            i = pick(user)
            if i is None:
                return self.send(404, json.dumps({"error": {"message": "no entry matches"}}))
            responses = script["entries"][i]["responses"]
            k = served.get(i, 0)
            served[i] = k + 1
            r = responses[min(k, len(responses) - 1)]
        if "hang" in r:
            time.sleep(r["hang"])
        if "status" in r:
            headers = [("Retry-After", r["retry_after"])] if "retry_after" in r else []
            return self.send(r["status"], json.dumps({"error": {"message": r.get(
                "message", "scripted failure")}}), headers)
        if r.get("echo_key"):
            return self.send(401, json.dumps({"error": {"message": f"bad key {carried}"}}))
        if "raw" in r:
            return self.send(200, r["raw"])
        n = 1 if script.get("ignore_n") else request.get("n", 1)
        if r.get("no_content"):
            choices = [{"index": 0, "message": {"role": "assistant"}, "finish_reason": "length"}]
        else:
            texts = r["content"] if isinstance(r["content"], list) else [r["content"]] * n
            choices = [{"index": j, "message": {"role": "assistant", "content": texts[j]},
                        "finish_reason": "stop"} for j in range(min(n, len(texts)))]
        answer = {"id": "fake", "object": "chat.completion", "model": "fake-model",
                  "choices": choices}
        if "usage" in r:
            answer["usage"] = {"prompt_tokens": r["usage"][0],
                               "completion_tokens": r["usage"][1],
                               "total_tokens": sum(r["usage"])}
        self.send(200, json.dumps(answer))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
