#!/usr/bin/env bash
# The winner runs as the user runs it: `tforge tune` of a realistic file launched through its own
# function (attention_varlen, which hard-codes num_warps=4 and passes no maxnreg), with a
# recording whose fastest candidate folds the scale (scalefold) with num_warps=2, maxnreg=64.
# Then, in a fresh python, best_variant.py is imported from the results and its own function
# called as a user calls it (Triton's ordinary `kernel[grid](...)` launch), compared with torch,
# and its launches of the kernel must carry the winner's num_warps and maxnreg. With a fixture
# transform whose launch decorator fails only on that path (droprun), the winner is refused and
# the next candidate named, the report and result.json saying why.
# usage: best_variant.sh TFORGE PYTHON SOURCE_DIR FIXTURE_TRANSFORM_DIR
set -u
tforge=$1 python=$2 src=$3 fixtures=$4
. "$(dirname "$0")/../support/preamble.sh"
task=$src/tests/fixtures/tasks/best_variant/task.json

# user OUT: best_variant.py as a user runs it, in a python of its own that knows nothing of
# tforge: imported from OUT, its own function called, the result compared with torch; prints
# the launch options each launch of the kernel got.
user() {
  TRITON_INTERPRET=1 "$python" - "$1" <<'EOF'
import math, sys
import torch, triton
from triton.runtime.interpreter import InterpretedFunction

seen = []  # what each launch of a kernel got, observed below every wrapper of the file's
for cls in (triton.runtime.JITFunction, InterpretedFunction):
    def observing(self, *args, _run=cls.run, **kwargs):
        seen.append((self.fn.__name__, {k: kwargs.get(k) for k in ("num_warps", "maxnreg")}))
        return _run(self, *args, **kwargs)
    cls.run = observing
sys.path.insert(0, sys.argv[1])
import best_variant

torch.manual_seed(0)
lengths = [40, 17, 33]
cu = torch.tensor([0, 40, 57, 90], dtype=torch.int32)
q, k, v = (torch.randn(90, 2, 32, dtype=torch.float16) for _ in range(3))
out = best_variant.attention_varlen(q, k, v, cu, max(lengths))
for a, b in zip(cu[:-1].tolist(), cu[1:].tolist()):
    qs, ks, vs = (x[a:b].float().transpose(0, 1) for x in (q, k, v))
    want = torch.softmax(qs @ ks.transpose(-1, -2) / math.sqrt(32), -1) @ vs
    err = (out[a:b].float().transpose(0, 1) - want).abs().max().item()
    assert err < 2e-2, f"sequence {a}:{b}: max abs error {err}"
print("launches", [options for name, options in seen if name == "_fwd_varlen"])
EOF
}

# The variant scalefold writes (its launch decorator replaces the kernel's run), launched as a
# user launches it: through the file's own function, Triton's `kernel[grid](...)`.
mkdir -p "$work/plain"
"$tforge" transform "$src/tests/python/fixtures/realistic/attention_varlen.py" --kernel _fwd_varlen \
  --transforms scalefold --set scalefold0=True --out "$work/plain/best_variant.py" >/dev/null 2>&1
user "$work/plain" >"$work/plain.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^def _tforge_scalefold__fwd_varlen' "$work/plain/best_variant.py" &&
   grep -qx "launches \[{'num_warps': 4, 'maxnreg': None}\]" "$work/plain.txt"; then ok
else bad "scalefold's variant launched as a user launches it (exit $rc): $(tail -3 "$work/plain.txt")"
fi

# The scale folded, 2 warps and 64 registers: the winner, its files run by the user.
out=$work/folded
"$tforge" tune "$task" --backend "replay:${task%/*}/recording.json" --check \
  --transforms scalefold --strategy exhaustive --budget 8 --compile-workers 1 --out "$out" -q \
  >"$work/folded.txt" 2>&1
rc=$?
if [ $rc = 0 ] && json "$out/result.json" 'r["transforms"]["winner"] == "scalefold0=True" and r["take_home"]["verified"] is True and r["take_home"]["refused"] == []' &&
   grep -q '^def _tforge_scalefold__fwd_varlen' "$out/best_variant.py"; then ok
else bad "the tune of the folded winner (exit $rc)"; cat "$work/folded.txt" "$out/result.json"; fi
user "$out" >"$work/user.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qx "launches \[{'num_warps': 2, 'maxnreg': 64}\]" "$work/user.txt"; then ok
else bad "best_variant.py launched as a user launches it (exit $rc): $(tail -5 "$work/user.txt")"
fi
# run as a script, its demo runs the winner's config too (the block comes before it)
TRITON_INTERPRET=1 "$python" "$out/best_variant.py" >"$work/script.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "max abs error" "$work/script.txt" &&
   [ "$(grep -n '^if __name__ == "__main__":' "$out/best_variant.py" | cut -d: -f1)" -gt \
     "$(grep -n '^_fwd_varlen = _tforge_tuned_launches(' "$out/best_variant.py" | cut -d: -f1)" ]
then ok; else bad "best_variant.py run as a script (exit $rc): $(tail -5 "$work/script.txt")"; fi

# A winner whose decorator breaks the user's launch: refused, the next candidate named.
out=$work/droprun
"$tforge" tune "$task" --backend "replay:${task%/*}/recording_droprun.json" --check \
  --plugin-dir "$fixtures" --transforms droprun --strategy exhaustive --budget 8 \
  --compile-workers 1 --out "$out" -q >"$work/droprun.txt" 2>&1
rc=$?
if [ $rc = 0 ] &&
   json "$out/result.json" 'len(r["take_home"]["refused"]) == 1 and r["take_home"]["refused"][0]["rewrites"] == "droprun0=True" and "warmup" in r["take_home"]["refused"][0]["reason"] and r["take_home"]["verified"] is True and r["transforms"]["winner"] in (None, "") and r["best"]["config"] == {"num_warps": 2, "maxnreg": 64}' &&
   grep -q '^- refused evaluation .*droprun0=True.*warmup' "$out/report.md" &&
   ! grep -q '_droprun' "$out/best_variant.py"; then ok
else bad "the refused winner (exit $rc)"; cat "$work/droprun.txt" "$out/report.md" "$out/result.json"; fi
user "$out" >"$work/user2.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qx "launches \[{'num_warps': 2, 'maxnreg': 64}\]" "$work/user2.txt"; then ok
else bad "the next candidate's best_variant.py (exit $rc): $(tail -5 "$work/user2.txt")"; fi

finish "best_variant"
