#!/usr/bin/env bash
# Runs every test that needs no GPU: sets up and builds first (./setup.sh, idempotent), runs the
# whole suite, then the unit tests again in a build with AddressSanitizer and
# UndefinedBehaviorSanitizer. Tests labelled `gpu` run only with TFORGE_GPU_TESTS=1, those
# labelled `llm` (a real model, prepared by experiments/llm/local_model.sh) only with
# TFORGE_LLM_TESTS=1: the default run needs neither a GPU nor a model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
./setup.sh
build=${TFORGE_BUILD_DIR:-build}
skipped=()
[ "${TFORGE_GPU_TESTS:-0}" = 1 ] || skipped+=(gpu)
[ "${TFORGE_LLM_TESTS:-0}" = 1 ] || skipped+=(llm)
exclude=()
[ ${#skipped[@]} -gt 0 ] && exclude=(-LE "$(IFS='|'; echo "${skipped[*]}")")
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${exclude[@]}"

python=$(grep '^Python3_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
cmake -S . -B build-asan -DTFORGE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DTFORGE_WERROR=ON \
  -DPython3_EXECUTABLE="$python" >/dev/null
cmake --build build-asan -j "$(nproc)" >/dev/null
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -L unit
