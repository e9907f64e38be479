#!/usr/bin/env bash
# What the cases cannot say, in Triton's interpreter: the folded variant launched with a negative
# scale (negative_scale.json) runs the kernel as the file has it, and passes the check where the
# folded kernel alone gives NaN in every element (its masked scores become +inf).
# usage: checks.sh TFORGE ROOT  (run by tests/cli/transform.sh)
set -u
tforge=$1
cd "$2" || exit 1
out=$("$tforge" check tests/transforms/scalefold/negative_scale.json --transforms scalefold \
  --set scalefold0=True 2>&1)
rc=$?
if [ $rc != 0 ] || ! grep -q "the variant of --set .*: ok" <<<"$out"; then
  echo "FAIL: the folded variant with a negative scale (exit $rc): $(tail -3 <<<"$out")"
  exit 1
fi
