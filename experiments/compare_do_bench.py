"""Our timing against triton.testing.do_bench, on the same kernel, config and inputs (on a GPU).

    python experiments/compare_do_bench.py experiments/kernels/matmul/task.json [--shape 0]

Times the given configs (default: the task's baseline) with both, several times interleaved, and
prints the ratio of the medians: issue 4 asks them to agree within 3%. do_bench gets the kernel's
launch with its grid and arguments bound once (as a user would write it): a launch that costs
the CPU more than the L2 flush costs the GPU would be timed as kernel time by do_bench.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine",
                                "worker", "python"))
import torch  # noqa: E402
import triton  # noqa: E402
import tforge_worker  # noqa: E402
from tforge_worker.worker import bind, get, make_inputs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--config", action="append", default=[], help="JSON config (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    task = tforge_worker.load_task(args.task)
    shape = task["shapes"]["tune"][args.shape]
    configs = [json.loads(c) for c in args.config] or task["baseline"][:1]
    loaded = get(task)
    inputs = make_inputs(loaded, shape, 0)
    print(f"{task['kernel']} {shape} on {torch.cuda.get_device_name()}")
    for config in configs:
        ours, theirs, sleeps = [], [], []
        for _ in range(args.rounds):  # interleaved, so drift hits both alike
            t = tforge_worker.time(args.task, config, shape, seed=0)
            ours.append(t["median_ms"])
            sleeps.append(t["sleep_cycles"])
            theirs.append(triton.testing.do_bench(bind(loaded, inputs, config, shape),
                                                  return_mode="median"))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{json.dumps(config)}: tforge {a:.4f} ms, do_bench {b:.4f} ms, "
              f"ratio {a / b:.3f} (ours {min(ours):.4f}..{max(ours):.4f}, "
              f"do_bench {min(theirs):.4f}..{max(theirs):.4f}; our GPU sleep before each launch "
              f"{max(sleeps)} cycles)", flush=True)


if __name__ == "__main__":
    main()
