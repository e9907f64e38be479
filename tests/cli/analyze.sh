#!/usr/bin/env bash
# `tforge analyze`: the --json output of a few realistic fixtures against tests/golden/analyze/,
# the report naming each kernel, and the exit codes of bad input.
# usage: analyze.sh TFORGE ROOT [--update]  (run from ROOT: the documents hold relative paths)
set -u
tforge=$1 root=$2 update=${3:-}
cd "$root" || exit 1
fixtures=tests/python/fixtures/realistic golden=tests/golden/analyze
failures=0 passed=0
out=$(mktemp) err=$(mktemp) tmp=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$tmp"' EXIT

check() { # check OK MESSAGE
  if [ "$1" = 0 ]; then passed=$((passed + 1)); else echo "FAIL: $2"; failures=$((failures + 1)); fi
}

for name in gemm_autotune rms_norm_liger matvec_heuristics attention_causal; do
  "$tforge" analyze "$fixtures/$name.py" --json >"$out" 2>"$err"
  check $? "analyze $name --json exited $? ($(cat "$err"))"
  if [ "$update" = --update ]; then cp "$out" "$golden/$name.json"; fi
  diff -u "$golden/$name.json" "$out" >"$tmp/diff"
  check $? "analyze $name --json differs from $golden/$name.json:
$(head -40 "$tmp/diff")"
done

# the report names every kernel of the file with its line, and each launch site
"$tforge" analyze "$fixtures/gemm_autotune.py" >"$out" 2>"$err"
check $? "analyze gemm_autotune exited non-zero"
for want in "^kernel matmul_kernel \($fixtures/gemm_autotune.py:46\)" "^kernel leaky_relu " \
            "autotune .*configs configs \(built by code\), key \[\"M\",\"N\",\"K\"\]" \
            "launched at $fixtures/gemm_autotune.py:[0-9]+ matmul\(a, b, activation\): grid grid \(name\)" \
            "BLOCK_SIZE_K +block +powers of two 16..256" \
            "constraint \(BLOCK_SIZE_M\*BLOCK_SIZE_K \+ BLOCK_SIZE_K\*BLOCK_SIZE_N\) \* 2 \* num_stages <= 232448"; do
  grep -Eq -- "$want" "$out"
  check $? "analyze gemm_autotune: no line matching '$want'"
done
for f in "$fixtures"/*.py "$fixtures"/pkg/ops.py experiments/kernels/*/kernel.py; do
  "$tforge" analyze "$f" >"$out" 2>"$err"
  check $? "analyze $f exited non-zero: $(cat "$err")"
  for k in $(grep -A1 -E '^@(triton\.)?jit' "$f" | sed -nE 's/^def ([A-Za-z_0-9]+).*/\1/p'); do
    grep -q "^kernel $k ($f:" "$out"
    check $? "analyze $f does not report kernel $k"
  done
done
"$tforge" analyze "$fixtures/device_queries.py" >"$out" 2>&1
grep -q "device_queries.py:16 DEVICE = triton.runtime.driver.active.get_active_torch_device()" "$out"
check $? "analyze device_queries: no device query at line 16"
# Python's `and` / `or` of tiles noted with file:line; `and` of scalars not
"$tforge" analyze tests/python/fixtures/tile_logic.py >"$out" 2>&1
grep -q "^note: tests/python/fixtures/tile_logic.py:19: \`(rows\[:, None\] < M) and .*write \`&\`" "$out" &&
  grep -q "^note: tests/python/fixtures/tile_logic.py:11: \`mask or (offs < 0)\`" "$out" &&
  [ "$(grep -c '^note:' "$out")" = 2 ]
check $? "analyze tile_logic: not the two notes at lines 19 and 11: $(grep '^note' "$out")"
"$tforge" analyze "$fixtures/rms_norm_liger.py" --kernel _rms_norm_forward_kernel >"$out" 2>&1
grep -q "constraint BLOCK_SIZE >= n_cols" "$out" && ! grep -q "^functions:" "$out"
check $? "analyze --kernel: not the one kernel's report"

# expect CODE PATTERN ARGS...: the exit status and a line of stderr
expect() {
  local code=$1 pattern=$2
  shift 2
  "$tforge" "$@" >"$out" 2>"$err"
  local rc=$?
  [ "$rc" -eq "$code" ] && grep -Eq -- "$pattern" "$err"
  check $? "tforge $* -> exit $rc (want $code, stderr matching '$pattern'): $(cat "$err")"
}
printf 'import triton\n\ndef broken(:\n    pass\n' >"$tmp/broken.py"
expect 2 "^tforge analyze: $tmp/no-such.py: No such file or directory" analyze "$tmp/no-such.py"
expect 2 "^tforge analyze: $tmp: not a regular file" analyze "$tmp"
expect 2 "^tforge analyze: $tmp/broken.py:3: syntax error: " analyze "$tmp/broken.py"
expect 2 "^tforge analyze: $fixtures/gemm_autotune.py: no @triton.jit function 'nope' \(found: matmul_kernel, leaky_relu\)" \
  analyze "$fixtures/gemm_autotune.py" --kernel nope
expect 2 "FILE.py is required" analyze
expect 2 "unexpected argument 'extra'" analyze "$fixtures/gemm_autotune.py" extra
expect 2 "unknown option or missing value: --kernel" analyze "$fixtures/gemm_autotune.py" --kernel

echo "analyze: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
