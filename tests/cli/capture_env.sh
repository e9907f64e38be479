#!/usr/bin/env bash
# `tforge capture` / `tforge init` in the user's environment: the printed report of what was
# inferred and why (and the same as `explain` in --json), an interpreter gap met in the user's
# own script (exit 1, the line of their code), a launcher in a package checked from elsewhere.
# usage: capture_env.sh TFORGE PYTHON SOURCE_DIR
set -u
tforge=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") python=$2 src=$3
. "$(dirname "$0")/../support/preamble.sh"
realistic=$src/tests/python/fixtures/realistic
line_of() { grep -n -F -- "$2" "$1" | head -1 | cut -d: -f1; }

# the report: the launcher with its file:line, the grid, what is tuned (the kernel's line), the
# check shape
f=$realistic/rms_norm_liger.py
"$tforge" init "$f" --out "$work/init" > "$work/init.txt" 2>&1
rc=$?
if [ "$rc" -eq 0 ] &&
   grep -qF -- "- launcher rms_norm_forward ($f:$(line_of "$f" 'def rms_norm_forward('))" "$work/init.txt" &&
   grep -qF -- "- grid: the launcher's own, (15,) when recorded" "$work/init.txt" &&
   grep -qF -- "- tuned BLOCK_SIZE ($f:$(line_of "$f" 'BLOCK_SIZE: tl.constexpr'))" "$work/init.txt" &&
   grep -qE -- '^      \[512, 1024, 2048\], launched with 512' "$work/init.txt" &&
   grep -qF -- "- check shape {\"D0\": 3, \"D1\": 5, \"n_cols\": 180}" "$work/init.txt" &&
   grep -qF -- "n_cols 300 -> 180" "$work/init.txt"
then ok; else bad "init's report (exit $rc)"; cat "$work/init.txt"; fi

if "$tforge" init "$f" --out "$work/json" --json > "$work/init.json" 2>&1 &&
   "$python" -c "import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
e = r['tasks'][0]['explain']
assert [x['what'] for x in e if x['what'].startswith('launcher')] == ['launcher rms_norm_forward'], e
assert all(set(x) == {'what', 'why', 'line'} for x in e), e" "$work/init.json"
then ok; else bad "init --json's explain"; cat "$work/init.json"; fi

# an interpreter gap in the user's own script: exit 1, the line of their kernel, a GPU captures it
f=$realistic/gelu_tl_alias.py
"$tforge" capture --out "$work/gap" -- python "$f" > "$work/gap.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] &&
   grep -qF -- "interpreter gap at $f:$(line_of "$f" 'inner = SQRT_2_OVER_PI * fma(')" "$work/gap.txt" &&
   grep -qF -- "(fma = triton.language.math.fma)" "$work/gap.txt" &&
   grep -qF -- "the same script captures on a GPU" "$work/gap.txt"
then ok; else bad "capture of an interpreter gap (exit $rc)"; cat "$work/gap.txt"; fi

# a script that fails for its own reasons is no gap: exit 1, as before
printf 'raise ValueError("no data here")\n' > "$work/fails.py"
"$tforge" capture --out "$work/fails" -- python "$work/fails.py" > "$work/fails.txt" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -qF "the script failed: ValueError: no data here" "$work/fails.txt" &&
   ! grep -q "interpreter gap" "$work/fails.txt"
then ok; else bad "capture of a failing script (exit $rc)"; cat "$work/fails.txt"; fi

# a launcher in a package, another folder than its kernel: the task checks from anywhere
mkdir -p "$work/proj/benchmarks"
cp -r "$realistic/normpkg" "$work/proj/normpkg"
cat > "$work/proj/benchmarks/bench.py" <<'PY'
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch

from normpkg.ops.norm import rmsnorm

print(rmsnorm(torch.randn(64, 192), torch.randn(192)).shape)
PY
if (cd "$work/proj" && "$tforge" capture -- python benchmarks/bench.py > "$work/pkg.txt" 2>&1) &&
   grep -qF -- "- python_path ['../..'] ($work/proj/normpkg/ops/norm.py:" "$work/pkg.txt" &&
   mv "$work/proj" "$work/moved" &&
   (cd / && env -u TFORGE_PYTHONPATH "$tforge" check \
      "$work/moved/tforge-tasks/rms_norm_fwd_kernel_0/task.json" > "$work/pkg_check.txt" 2>&1)
then ok; else bad "a launcher in a package"; cat "$work/pkg.txt" "$work/pkg_check.txt" 2>/dev/null; fi

finish "capture_env"
