#!/usr/bin/env bash
# The plugin authors' kit: install, build the out-of-tree example against the installed headers
# only (through pkg-config), and load it with the installed tforge.
# usage: install_kit.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 source=$2
prefix=$(mktemp -d) work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cp -r "$source/examples/hello-plugin/." "$work/"
pc=$(dirname "$(find "$prefix" -name tforge-plugin.pc | head -n 1)")
# No -I into the source tree: only what the kit installed.
PKG_CONFIG_PATH=$pc make -C "$work" CFLAGS="-O2 -Wall -Wextra -Werror -std=c11 -pedantic" >/dev/null
"$prefix/bin/tforge" plugins --plugin-dir "$work" | tee "$work/listing"
grep -Eq '^hello +strategy +1\.0\.0' "$work/listing"
! grep -q refused "$work/listing"
# Its published option is listed, a mistyped one is refused before it runs, and it replays.
"$prefix/bin/tforge" plugins --options --plugin-dir "$work" | grep -Eq '^ +explore +0\.1 '
space=$source/data/h200/softmax_0_H200.json.gz
! "$prefix/bin/tforge" replay --plugin-dir "$work" --cache "$space" --strategy hello \
    --option hello.explor=0.5 --seeds 1 2> "$work/refused.txt"
grep -q "strategy hello has no option 'explor' (it takes explore" "$work/refused.txt"
"$prefix/bin/tforge" replay --plugin-dir "$work" --cache "$space" --strategy hello,random \
  --option hello.explore=0.2 --seeds 3 --budget 20 | tee "$work/replay.txt"
grep -Eq '^hello +[0-9.-]+ ' "$work/replay.txt"
echo "install kit: 3 passed, 0 failed"
