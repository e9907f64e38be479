#!/usr/bin/env bash
# A cost model built out of tree against the installed kit (examples/hello-costmodel, through
# pkg-config), listed by the installed tforge as a cost model and minimised by `replay
# --objective` over the synthetic energy recording (made-up numbers, tests/fixtures/recordings).
# usage: costmodel_kit.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 source=$2
prefix=$(mktemp -d) work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cp -r "$source/examples/hello-costmodel/." "$work/"
pc=$(dirname "$(find "$prefix" -name tforge-plugin.pc | head -n 1)")
# No -I into the source tree: only what the kit installed.
PKG_CONFIG_PATH=$pc make -C "$work" CFLAGS="-O2 -Wall -Wextra -Werror -std=c11 -pedantic" >/dev/null
"$prefix/bin/tforge" plugins --plugin-dir "$work" | tee "$work/listing"
grep -Eq '^ed2p +costmodel +1\.0\.0' "$work/listing"
! grep -q refused "$work/listing"
# energy x delay^2 of each entry: BLOCK 64's 0.25 J x (0.45 ms)^2 is the least
"$prefix/bin/tforge" replay --plugin-dir "$work" --objective ed2p --strategy exhaustive \
  --cache "$source/tests/fixtures/recordings/synthetic_energy.json" --seeds 1 --budget 5 --json \
  > "$work/replay.json"
python3 - "$work/replay.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["objective"] == "energy-delay-squared" and d["unit"] == "J*s^2", d
assert abs(d["optimum"] - 0.25 * 0.45e-3 ** 2) < 1e-15, d["optimum"]
PY
# the shipped energy model, installed with the engine: BLOCK 256's 0.20 J is the least
"$prefix/bin/tforge" replay --objective energy --strategy exhaustive --seeds 1 --budget 5 \
  --cache "$source/tests/fixtures/recordings/synthetic_energy.json" | tee "$work/energy.txt"
grep -q "objective energy (lower is better): optimum 0.2 J" "$work/energy.txt"
echo "costmodel kit: 3 passed, 0 failed"
