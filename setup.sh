#!/usr/bin/env bash
# Sets TritonForge up on a Debian machine from nothing, then builds it. Idempotent: run it again
# after a pull and it only does what is missing.
#
#   ./setup.sh                      Debian packages, a Python environment in .venv (CPU torch and
#                                   Triton, from requirements.txt), and the build in build/
#   TFORGE_PYTHON=python3 ./setup.sh   use that interpreter instead of .venv: on a GPU machine,
#                                   the Python that already has CUDA torch and Triton; the engine
#                                   embeds it, so its headers and libpython must be installed
#   TFORGE_BUILD_DIR=dir            build somewhere else (default build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
build=${TFORGE_BUILD_DIR:-build}
say() { printf 'setup: %s\n' "$*"; }

# ---- Debian packages ----
packages=(build-essential cmake pkg-config libgsl-dev libopenblas-dev libcjson-dev
          libsqlite3-dev zlib1g-dev libcmocka-dev libopenmpi-dev openmpi-bin libcurl4-openssl-dev
          python3-dev python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    say "missing Debian packages and no root or sudo to install them: ${missing[*]}"; exit 2
  fi
  say "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# ---- Python ----
if [ -n "${TFORGE_PYTHON:-}" ]; then
  python=$(command -v "$TFORGE_PYTHON") || { say "TFORGE_PYTHON=$TFORGE_PYTHON not found"; exit 2; }
  say "using $python (TFORGE_PYTHON)"
else
  # Debian's own interpreter: python3-dev gives it the headers and libpython the engine embeds.
  if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    /usr/bin/python3 -m venv .venv
  fi
  python=$PWD/.venv/bin/python
  stamp=.venv/.tforge-requirements
  if ! cmp -s requirements.txt "$stamp"; then
    say "installing requirements.txt into .venv (torch CPU build, triton)"
    "$python" -m pip install -q -r requirements.txt
    cp requirements.txt "$stamp"
  fi
fi

# ---- build ----
cmake -S . -B "$build" -DPython3_EXECUTABLE="$python" -DTFORGE_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
say "built $build/bin/tforge"
