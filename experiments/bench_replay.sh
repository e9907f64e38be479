#!/usr/bin/env bash
# The strategy lab's speed: random, annealing, genetic and coordinate descent, 100 seeds each,
# on every recorded space in ../shared/data/ktcache (budget 100; each run goes on to random
# search's 96% cut-off). Usage: experiments/bench_replay.sh [TFORGE] [KTCACHE_DIR]
set -eu
here=$(dirname "${BASH_SOURCE[0]}")
tforge=${1:-$here/../build/bin/tforge}
data=${2:-$here/../../shared/data/ktcache}
for f in "$data"/*.json.gz; do
  "$tforge" replay --cache "$f" --strategy random,annealing,genetic,coordinate --budget 100 \
    --seeds 100
done
