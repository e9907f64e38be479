"""Which timing is right: our protocol, triton.testing.do_bench, or neither (issue 16, on a GPU).

    python experiments/timing/protocol.py TASK.json [--config JSON]... [--rounds 7] [--json OUT]

For each config, in interleaved rounds (so that drift hits every protocol alike), the same bound
launch on the same inputs is timed by:
  tforge      our protocol (tforge_worker.time: events around each launch, the L2 flushed by
              reading 256 MB before each, as many times as cover the launch's CPU time)
  do_bench    triton.testing.do_bench, median
  and, under CUPTI's activity records (torch.profiler, kineto: each kernel's own start and end
  on the GPU, no events), the same two loops again, written out here, plus ablations of what
  differs between them:
  act_ours    our loop (flushed warm-up, as many reading flushes before each timed launch as
              our protocol used)
  act_dob     do_bench's loop (warm-up without flushes, flush before each timed launch)
  act_clean   flush by reading the buffer (no dirty lines left in L2) instead of zeroing it
  act_warm    no flush at all (inputs warm in L2)
  act_sleep   do_bench's loop with a GPU sleep of 200,000 cycles queued before each flush (the
              cover our protocol used until 2026-12-02: an idle GPU before each launch)
Each activity loop also brackets every launch with events, so `ev_*` gives the events' median of
the very launches whose activity durations `act_*` gives: their difference is what events add.
The activity medians are the kernels' exact durations under each protocol: comparing tforge with
act_ours gives what events add, act_ours with act_dob what the warm-up does, act_dob with
act_clean what the dirty lines left by a zeroing flush cost the kernel. The SM clock (NVML, when
pynvml is there) is read at the end of each activity loop, while the GPU is still busy.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "engine", "worker", "python"))
import torch  # noqa: E402
import triton  # noqa: E402
import tforge_worker  # noqa: E402
from tforge_worker.worker import bind, get, make_inputs  # noqa: E402

_FLUSH = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")


def clock_mhz():
    try:
        return torch.cuda.clock_rate()
    except Exception:
        return None


def flush(how):
    if how == "zero":
        _FLUSH.zero_()
    elif how == "read":
        _FLUSH.sum(dtype=torch.int64)  # reads 256 MB: evicts the inputs, dirties nothing


def activity_loop(run, kernel_name, flush_how, warm_flush, estimate_ms, sleep_cycles=0,
                  flushes=1):
    """(median activity duration, median event time, SM clock) of one do_bench-sized loop, ms."""
    n_warm = max(1, int(25 / estimate_ms))
    n_rep = max(10, min(1000, int(100 / estimate_ms)))
    for _ in range(n_warm):
        if warm_flush:
            flush(flush_how)
        run()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    with torch.profiler.profile(activities=acts) as prof:
        for s, e in zip(starts, ends):
            if sleep_cycles:
                torch.cuda._sleep(sleep_cycles)
            for _ in range(flushes):
                flush(flush_how)
            s.record()
            run()
            e.record()
        clock = clock_mhz()
        torch.cuda.synchronize()
    durations = [e.device_time for e in prof.events()
                 if e.device_type == torch.autograd.DeviceType.CUDA and kernel_name in e.name]
    if len(durations) < n_rep:
        raise SystemExit(f"only {len(durations)} of {n_rep} launches of {kernel_name} were "
                         "recorded by the profiler")
    events = statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))
    return statistics.median(durations[-n_rep:]) / 1e3, events, clock  # device_time is in us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--config", action="append", default=[], help="JSON config (repeatable)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", help="write every round's numbers here")
    args = ap.parse_args()
    task = tforge_worker.load_task(args.task)
    shape = task["shapes"]["tune"][args.shape]
    configs = [json.loads(c) for c in args.config] or task["baseline"][:1]
    loaded = get(task)
    inputs = make_inputs(loaded, shape, 0)
    name = task["kernel"]
    print(f"{name} {shape} on {torch.cuda.get_device_name()}, {args.rounds} rounds", flush=True)
    loops = {"ours": ("read", True), "dob": ("zero", False), "clean": ("read", False),
             "warm": ("none", False), "sleep": ("zero", False)}
    protocols = ["tforge", "do_bench"] + [f"{k}_{n}" for n in loops for k in ("act", "ev")]
    everything = []
    for config in configs:
        run = bind(loaded, inputs, config, shape)
        run()
        torch.cuda.synchronize()
        rows = {p: [] for p in protocols}
        clocks = {n: [] for n in loops}
        flushes = []
        for _ in range(args.rounds):
            t = tforge_worker.time(args.task, config, shape, seed=0)
            if t["status"] != "ok":
                raise SystemExit(f"our protocol failed: {t}")
            rows["tforge"].append(t["median_ms"])
            flushes.append(t["flushes"])
            rows["do_bench"].append(triton.testing.do_bench(run, return_mode="median"))
            est = rows["do_bench"][-1]
            for n, (how, warm_flush) in loops.items():
                act, ev, clock = activity_loop(run, name, how, warm_flush, est,
                                               200000 if n == "sleep" else 0,
                                               t["flushes"] if n == "ours" else 1)
                rows[f"act_{n}"].append(act)
                rows[f"ev_{n}"].append(ev)
                clocks[n].append(clock)
        med = {p: statistics.median(v) for p, v in rows.items()}
        everything.append({"config": config, "rounds": rows, "median": med, "clock_mhz": clocks,
                           "tforge_flushes": flushes})
        print(f"\n{json.dumps(config)}  (our protocol's flushes before each launch: {flushes})")
        print("| protocol | median of medians (ms) | range | / act_dob | SM MHz (median) |")
        print("|---|---|---|---|---|")
        for p in protocols:
            loop = p.split("_", 1)[1] if p.startswith(("act_", "ev_")) else None
            mhz = statistics.median(c for c in clocks[loop] if c) if loop and any(clocks[loop]) \
                else ""
            print(f"| {p} | {med[p]:.4f} | {min(rows[p]):.4f}-{max(rows[p]):.4f} | "
                  f"{med[p] / med['act_dob']:.3f} | {mhz} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": args.task, "shape": shape, "configs": everything}, f, indent=1)


if __name__ == "__main__":
    main()
