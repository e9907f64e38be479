#!/usr/bin/env bash
# A kernel whose mask joins tiles with Python's `and`, tuned in Triton's interpreter: the run
# warns of it (file:line) on stderr and in report.md, where a crash or a wrong answer would be
# read; the same task on a kernel joining scalars alone warns of nothing.
# usage: tune_tile_logic.sh TFORGE SOURCE_DIR
set -u
tforge=$1 src=$2
. "$(dirname "$0")/../support/preamble.sh"

cp "$src/tests/python/fixtures/tile_logic.py" "$work/"
task() { # task KERNEL REFERENCE GRID ARGS BASELINE
  cat >"$work/$1.json" <<JSON
{"source": "tile_logic.py", "kernel": "$1",
 "inputs": [{"name": "x", "shape": ["M", "N"], "dtype": "float32", "init": "randn"},
            {"name": "out", "shape": ["M", "N"], "dtype": "float32"}],
 "outputs": [{"name": "out", "atol": 1e-2, "rtol": 1e-2}],
 "launch": {"grid": "$3", "args": $4},
 "reference": "tile_logic:$2",
 "shapes": {"tune": [{"M": 16, "N": 40}], "check": [{"M": 16, "N": 40}]},
 "baseline": $5}
JSON
}
task copy_rows copy "(triton.cdiv(M, BLOCK_M),)" '["x", "out", "M", "N"]' \
  '{"BLOCK_M": 8, "BLOCK_N": 64, "num_warps": 4}'
task scalar_flags double "(triton.cdiv(M * N, BLOCK),)" '["x", "out", "M * N"]' \
  '{"BLOCK": 64, "num_warps": 4}'

line=$(grep -n 'mask = (rows' "$work/tile_logic.py" | cut -d: -f1)
helper=$(grep -n 'mask or (offs < 0)' "$work/tile_logic.py" | cut -d: -f1)
if "$tforge" tune "$work/copy_rows.json" --backend interpret --budget 2 --transforms none \
     --out "$work/rows" > "$work/rows.txt" 2>&1 &&
   grep -q "interpreter gap: .*tile_logic.py:$line: \`(rows\[:, None\] < M) and" "$work/rows.txt" &&
   grep -q '^## Warnings' "$work/rows/report.md" &&
   grep -q "^- interpreter gap: .*tile_logic.py:$line: .*write \`&\`, which is what the kernel means on the GPU" "$work/rows/report.md" &&
   grep -q "^- interpreter gap: .*tile_logic.py:$helper: \`mask or (offs < 0)\`" "$work/rows/report.md"
then ok; else bad "the and-joined mask not warned of"; cat "$work/rows.txt" "$work/rows/report.md"; fi

if "$tforge" tune "$work/scalar_flags.json" --backend interpret --budget 2 --transforms none \
     --out "$work/flags" > "$work/flags.txt" 2>&1 &&
   ! grep -q "interpreter gap" "$work/flags.txt" && ! grep -q '^## Warnings' "$work/flags/report.md"
then ok; else bad "scalars joined by and warned of"; cat "$work/flags.txt" "$work/flags/report.md"; fi

finish "tune_tile_logic"
