#!/usr/bin/env bash
# The sweep of our examples (examples.json: every example with a recording in data/h200 or
# experiments/profile/recordings, each recorded shape, replay backend) on one rank and under
# `mpirun -n RANKS --oversubscribe`, then their winners per (task, shape) compared
# (compare.py) and their wall times printed.
# usage: examples.sh TFORGE WORKDIR [RANKS (default 4)] [MANIFEST (default examples.json)]
set -u
tforge=$(realpath "$1") work=$2 ranks=${3:-4}
here=$(cd "$(dirname "$0")" && pwd)
manifest=$(realpath "${4:-$here/examples.json}")
python=${PYTHON:-python3}
mkdir -p "$work" && rm -rf "$work/one" "$work/ranks$ranks"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

start=$(date +%s.%N)
"$tforge" sweep "$manifest" --out "$work/one" -q > "$work/one.txt" 2>&1
rc1=$?
mid=$(date +%s.%N)
mpirun -n "$ranks" --oversubscribe "$tforge" sweep "$manifest" --out "$work/ranks$ranks" -q \
  > "$work/ranks$ranks.txt" 2>&1
rcn=$?
end=$(date +%s.%N)
grep '^sweep:' "$work/one.txt" "$work/ranks$ranks.txt"
printf '1 rank: exit %d, %.1f s wall; %d ranks: exit %d, %.1f s wall\n' "$rc1" \
  "$(echo "$mid - $start" | bc)" "$ranks" "$rcn" "$(echo "$end - $mid" | bc)"
"$python" "$here/compare.py" "$work/one" "$work/ranks$ranks"
