#!/usr/bin/env bash
# Source transforms, case by case (tests/transforms/ID/cases, one case a line):
#   FILE KERNEL NAME [TASK] : NAME=VALUE ...
# For each case: the diff of the variant against FILE equals tests/transforms/ID/NAME.diff;
# with every parameter at level 0 the variant is FILE byte for byte; with TASK, `tforge check
# TASK` of the variant passes (Triton's interpreter, fresh inputs, poisoned outputs). Then the
# transforms that do not apply to a file leave it unchanged, a file's kernel is found without
# --kernel beside its helpers, and overlapping edits are refused.
# usage: transform.sh TFORGE ROOT [FIXTURE_TRANSFORM_DIR] [--update]  (run from ROOT: the cases
# hold relative paths)
set -u
tforge=$1 root=$2 fixtures=${3:-} update=${4:-}
[ "$fixtures" = --update ] && { fixtures=; update=--update; }
cd "$root" || exit 1
failures=0 passed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check OK MESSAGE
  if [ "$1" = 0 ]; then passed=$((passed + 1)); else echo "FAIL: $2"; failures=$((failures + 1)); fi
}

for cases in tests/transforms/*/cases; do
  id=$(basename "$(dirname "$cases")")
  while read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    head=${line%% : *} settings=${line#* : }
    read -r file kernel name task <<<"$head"
    sets=()
    for s in $settings; do sets+=(--set "$s"); done
    golden=tests/transforms/$id/$name.diff
    "$tforge" transform "$file" --kernel "$kernel" --transforms "$id" "${sets[@]}" --diff \
      >"$tmp/diff" 2>"$tmp/err"
    check $? "$id/$name: transform exited non-zero: $(cat "$tmp/err")"
    if [ "$update" = --update ]; then cp "$tmp/diff" "$golden"; fi
    if [ ! -s "$tmp/diff" ]; then check 1 "$id/$name: the variant equals the file"; fi
    diff -u "$golden" "$tmp/diff" >"$tmp/golden" 2>&1
    check $? "$id/$name: the diff differs from $golden:
$(head -40 "$tmp/golden")"
    "$tforge" transform "$file" --kernel "$kernel" --transforms "$id" --out "$tmp/same.py" \
      2>"$tmp/err"
    cmp -s "$file" "$tmp/same.py"
    check $? "$id/$name: at level 0 the variant is not $file byte for byte $(cat "$tmp/err")"
    if [ -n "$task" ]; then
      "$tforge" check "$task" --transforms "$id" "${sets[@]}" >"$tmp/out" 2>&1
      check $? "$id/$name: check of the variant failed: $(tail -5 "$tmp/out")"
    fi
  done <"$cases"
done

# Two transforms at once (pair IDS FILE KERNEL GOLDEN TASK SET...): the composed variant's diff
# against its golden, and the variant checked.
pair() {
  local ids=$1 file=$2 kernel=$3 golden=$4 task=$5 sets=()
  shift 5
  for s in "$@"; do sets+=(--set "$s"); done
  "$tforge" transform "$file" --kernel "$kernel" --transforms "$ids" "${sets[@]}" --diff \
    >"$tmp/diff" 2>"$tmp/err"
  check $? "$ids: transform exited non-zero: $(cat "$tmp/err")"
  if [ "$update" = --update ]; then cp "$tmp/diff" "$golden"; fi
  diff -u "$golden" "$tmp/diff" >"$tmp/golden" 2>&1
  check $? "$ids: the diff differs from $golden:
$(head -40 "$tmp/golden")"
  "$tforge" check "$task" --transforms "$ids" "${sets[@]}" >"$tmp/out" 2>&1
  check $? "$ids: check of the variant failed: $(tail -5 "$tmp/out")"
}
# groupm's swizzle, several lines written in place of two, inside the tile loop persistent wraps
# the body in (it re-indents the body: the swizzle's lines follow)
pair groupm,persistent tests/transforms/groupm/gemm_linear.py gemm_kernel \
  tests/transforms/persistent/gemm_linear_groupm.diff tests/transforms/groupm/gemm_linear.json \
  group_m=8 persistent_programs=132
# attention's key loop split by masksplit, its scale folded: the whole blocks' loop is folded,
# the last block's (the file's own text) keeps the product
pair masksplit,scalefold experiments/kernels/attention/kernel.py attn_fwd \
  tests/transforms/scalefold/attention_masksplit.diff experiments/kernels/attention/task.json \
  masksplit0=True scalefold0=True

# A transform that does not apply says so and changes nothing: pipeline on a kernel without loops.
file=tests/python/fixtures/realistic/rms_norm_liger.py
"$tforge" transform "$file" --kernel _rms_norm_forward_kernel --transforms pipeline >"$tmp/out" 2>&1
grep -q "do not apply: pipeline" "$tmp/out"
check $? "pipeline applied to a kernel without a loop that loads: $(cat "$tmp/out")"
"$tforge" transform "$file" --kernel _rms_norm_forward_kernel --transforms pipeline --out "$tmp/same.py"
cmp -s "$file" "$tmp/same.py"
check $? "a transform that does not apply changed the file"

for f in tests/transforms/*/not_applicable; do id=$(basename "$(dirname "$f")"); while read -r file kernel; do out=$("$tforge" transform "$file" --kernel "$kernel" --transforms "$id" 2>&1; "$tforge" transform "$file" --kernel "$kernel" --transforms "$id" --out "$tmp/same.py" 2>&1); grep -q "do not apply: $id" <<<"$out" && cmp -s "$file" "$tmp/same.py"; check $? "$id applied to $file ($kernel), or changed it: $out"; done < <(grep -v "^#" "$f"); done # the same for each tests/transforms/ID/not_applicable (FILE KERNEL a line)
for s in tests/transforms/*/checks.sh; do bash "$s" "$tforge" . >"$tmp/out" 2>&1; check $? "$s: $(tail -5 "$tmp/out")"; done # each tests/transforms/ID/checks.sh (TFORGE ROOT: exit 0)

# An unknown parameter or value is refused with exit 2, naming it.
"$tforge" transform experiments/kernels/matmul/kernel.py --set loop0_stages=7 >"$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "'7' is not one of the parameter's values" "$tmp/out"
check $? "a bad value: exit $rc, $(cat "$tmp/out")"

# Without --kernel the kernel is the one jit function no other calls (matmul_kernel calls its
# leaky_relu); with two such the file is refused, naming them and the helper apart.
"$tforge" transform tests/python/fixtures/realistic/gemm_autotune.py >"$tmp/out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^kernel matmul_kernel " "$tmp/out"
check $? "the kernel beside a helper: exit $rc, $(head -3 "$tmp/out")"
# each parameter listed with its role and the effect its transform declares
grep -Eq "^ +loop0_stages +0, 1, 2, 3, 4, 5  \(rewrite: pipeline-stages\)$" "$tmp/out" &&
  grep -Eq "^ +maxnreg .*\(launch option: register-cap\)$" "$tmp/out"
check $? "the parameters' effects: $(grep -E 'loop0_stages|maxnreg' "$tmp/out")"
"$tforge" transform tests/python/fixtures/realistic/glu_act.py >"$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "has 2 kernels (swiglu_fwd_kernel, geglu_tanh_fwd_kernel; helpers: _tanh)" \
  "$tmp/out"
check $? "two kernels and a helper: exit $rc, $(cat "$tmp/out")"

# Overlapping edits are refused, naming both transforms (a fixture transform that rewrites the
# iterator pipeline appends its options to).
if [ -n "$fixtures" ]; then
  "$tforge" transform experiments/kernels/matmul/kernel.py --plugin-dir "$fixtures" \
    --transforms pipeline,clobber --set loop0_stages=2 --set clobber=True >"$tmp/out" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q "overlapping edits: transform '.*' at line 32 and transform '.*' at line 32" \
    "$tmp/out" && grep -q "'clobber'" "$tmp/out" && grep -q "'pipeline'" "$tmp/out"
  check $? "overlapping edits: exit $rc, $(cat "$tmp/out")"
fi

echo "transform: $passed passed, $failures failed"
[ "$failures" = 0 ]
