"""Launches one config of a task a few times, synchronised: the process that `ncu` profiles for
the reference numbers our profiler is compared with (issue 16). With `--prepare profile` each
launch is prepared as our profiler prepares its passes (written inputs restored, the L2 flushed
by reading a 256 MB buffer), so that `ncu --cache-control none` sees the L2 state our counters see.

    ncu --clock-control none --kernel-name K --launch-skip 1 --launch-count 1 \
        --metrics M1,M2 python experiments/profile/launch.py TASK.json --config JSON
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "engine", "worker", "python"))
import torch  # noqa: E402
import tforge_worker  # noqa: E402
from tforge_worker import bench  # noqa: E402
from tforge_worker.worker import bind, get  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--config", help="JSON config (default: the task's baseline)")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--prepare", choices=("none", "profile"), default="none",
                    help="profile: restore and flush before each launch, as our profiler does")
    ap.add_argument("--flushes", type=int, default=1, help="flushes of a profile preparation")
    ap.add_argument("--no-restore", action="store_true",
                    help="a profile preparation without restoring the written inputs")
    args = ap.parse_args()
    task = tforge_worker.load_task(args.task)
    shape = task["shapes"]["tune"][args.shape]
    config = json.loads(args.config) if args.config else task["baseline"][0]
    loaded = get(task)
    inputs, pristine = bench._inputs(loaded, shape, 0)
    run = bind(loaded, inputs, config, shape)
    flush = bench._flusher()
    for _ in range(args.launches):
        if args.prepare == "profile":
            if not args.no_restore:
                for k, v in pristine.items():
                    inputs[k].copy_(v)
            for _ in range(args.flushes):
                flush()
            torch.cuda.synchronize()
        run()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
