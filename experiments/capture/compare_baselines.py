"""The baseline of a captured task against the hand-written task's, timed interleaved in one
process: prints one Markdown row (medians over the rounds, their ratio, their ranges).
usage: compare_baselines.py HAND_TASK CAPTURED_DIR [ROUNDS]
The captured task compared is the one whose sizes are the hand-written task's first tuning
shape's."""
import glob
import json
import os
import statistics
import sys

from tforge_worker import load_task, time

hand = load_task(sys.argv[1])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
want = sorted(hand["shapes"]["tune"][0].values())
found = [p for p in sorted(glob.glob(os.path.join(sys.argv[2], "*", "task.json")))
         if sorted(set(json.load(open(p))["shapes"]["tune"][0].values())) == sorted(set(want))]
if not found:
    sys.exit(f"no captured task in {sys.argv[2]} at sizes {want}")
captured = load_task(found[0])
pairs = [(hand, hand["baseline"][0], hand["shapes"]["tune"][0]),
         (captured, captured["baseline"][0], captured["shapes"]["tune"][0])]
medians = ([], [])
for _ in range(rounds):
    for i, (task, config, shape) in enumerate(pairs):
        r = time(task, config, shape)
        assert r["status"] == "ok", r
        medians[i].append(r["median_ms"])
h, c = statistics.median(medians[0]), statistics.median(medians[1])
print(f"| {hand['kernel']} | {pairs[0][2]} | {captured['launch'].get('call', 'grid')} | "
      f"{h:.4f} | {c:.4f} | {c / h:.3f} | {min(medians[0]):.4f}-{max(medians[0]):.4f} | "
      f"{min(medians[1]):.4f}-{max(medians[1]):.4f} |")
print(f"captured task: {found[0]}")
