"""Record a whole tuning space on a GPU, as a Kernel Tuner cache file.

Every valid configuration of a task's space is compiled (in parallel, on the CPU cores), checked
against the task's reference on fresh random inputs at the task's `check` shapes (small shapes
chosen to exercise the masks; checking at the tuning shape would cost more than timing), and timed
at the tuning shape with the worker's honest protocol (warm-up, CUDA events, L2 flushed between
launches). The result is the community's recorded-space
format, so `tforge replay` and every other tool that reads Kernel Tuner caches can replay it.

    python experiments/record_space.py experiments/kernels/softmax/task.json --shape 0 \
        --out softmax_H200.json.gz [--jobs 16] [--warmup-ms 5] [--rep-ms 25] [--energy]

Failures are recorded as Kernel Tuner spells them: a configuration that does not compile (or
exceeds the GPU's resources) is "CompilationFailedConfig"; one that fails at run time or computes
a wrong answer is "RuntimeFailedConfig" (Kernel Tuner has no word for wrong), and the cache's
`tforge_status` field says which.
"""
import argparse
import datetime
import gzip
import itertools
import json
import multiprocessing
import os
import platform
import sys
import time as clock
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine",
                                "worker", "python"))
import tforge_worker  # noqa: E402
from tforge_worker.task import eval_expression  # noqa: E402


def valid_configs(task):
    params = task["space"]["params"]
    names = list(params)
    for values in itertools.product(*(params[n] for n in names)):
        config = dict(zip(names, values))
        if all(eval_expression(c, config) for c in task["space"].get("constraints", [])):
            yield config


def compile_one(job):
    """Compiles for the tuning shape and for every check shape (Triton specialises on sizes'
    divisibility, so they may be different binaries): the measuring process then only loads."""
    path, config, shapes = job
    start = clock.perf_counter()
    results = [tforge_worker.compile(path, config, s) for s in shapes]
    result = next((r for r in results if r["status"] != "ok"), results[0])
    result["wall_s"] = clock.perf_counter() - start
    return result


def write(path, doc):
    """Writes through a temporary file, so that an interrupted run leaves the last checkpoint."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path + ".part", "wt") as f:
        json.dump(doc, f)
    os.replace(path + ".part", path)


def key_of(config, names):
    return ",".join(str(config[n]) for n in names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task")
    ap.add_argument("--shape", default="0", help="index into shapes.tune, or a JSON object")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--warmup-ms", type=float, default=5.0)
    ap.add_argument("--rep-ms", type=float, default=25.0)
    ap.add_argument("--energy", action="store_true",
                    help="also each configuration's joules a launch and mean power (NVML's "
                         "counter over a batch of about 2 s more a configuration)")
    args = ap.parse_args()

    task = tforge_worker.load_task(args.task)
    shape = (task["shapes"]["tune"][int(args.shape)] if args.shape.isdigit()
             else json.loads(args.shape))
    names = list(task["space"]["params"])
    configs = list(valid_configs(task))
    print(f"{task['kernel']} {shape}: {len(configs)} valid configurations", flush=True)
    import torch
    import triton
    doc = {
        "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "none",
        "kernel_name": task["kernel"],
        "problem_size": list(shape.values()),
        "tune_params_keys": names,
        "tune_params": task["space"]["params"],
        "objective": "time",
        "tforge_environment": {"torch": torch.__version__, "triton": triton.__version__,
                               "host": platform.node(), "shape": shape,
                               "task": os.path.relpath(args.task)},
        "cache": {},
    }
    if os.path.exists(args.out):  # resume: what was measured stays measured
        doc["cache"] = json.load((gzip.open if args.out.endswith(".gz") else open)(
            args.out, "rt"))["cache"]
        configs = [c for c in configs if key_of(c, names) not in doc["cache"]]
        print(f"resuming: {len(doc['cache'])} already measured", flush=True)
    cache = doc["cache"]

    start = clock.perf_counter()
    # spawn: the compile processes must not inherit this process's CUDA state
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        shapes = [shape] + task["shapes"]["check"]
        built = list(pool.map(compile_one, [(args.task, c, shapes) for c in configs],
                              chunksize=4))
    compile_wall = clock.perf_counter() - start
    serial = sum(b["wall_s"] for b in built)
    print(f"compiled in {compile_wall:.1f} s on {args.jobs} processes "
          f"(serial sum {serial:.1f} s, {serial / max(compile_wall, 1e-9):.1f}x)", flush=True)

    start = clock.perf_counter()
    for i, (config, b) in enumerate(zip(configs, built)):
        entry = dict(config)
        entry.update(compile_time=1e3 * b["wall_s"], verification_time=0.0, benchmark_time=0.0,
                     strategy_time=0, framework_time=0, times=[],
                     timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat())
        if b["status"] != "ok":
            entry.update(time="CompilationFailedConfig", tforge_status=b["status"],
                         tforge_message=b.get("message", "")[:300])
            cache[key_of(config, names)] = entry
            continue
        entry.update(registers=b.get("registers"), spill_stores=b.get("spill_stores"),
                     shared_bytes=b.get("shared_bytes"))
        t0 = clock.perf_counter()
        for small in task["shapes"]["check"]:
            check = tforge_worker.run_check(args.task, config, small, seed=1000 + i)
            if check["status"] != "ok":
                break
        entry["verification_time"] = 1e3 * (clock.perf_counter() - t0)
        if check["status"] != "ok":
            entry.update(time="RuntimeFailedConfig", tforge_status=check["status"],
                         tforge_message=check.get("message", "")[:300])
            cache[key_of(config, names)] = entry
            continue
        t0 = clock.perf_counter()
        # one input set for every timing: fresh inputs matter to the check, not to the clock
        timed = tforge_worker.time(args.task, config, shape, seed=0, warmup_ms=args.warmup_ms,
                                   rep_ms=args.rep_ms, samples=True, energy=args.energy)
        entry["benchmark_time"] = 1e3 * (clock.perf_counter() - t0)
        if timed["status"] != "ok":
            entry.update(time="RuntimeFailedConfig", tforge_status=timed["status"],
                         tforge_message=timed.get("message", "")[:300])
        else:
            entry.update(time=timed["median_ms"], times=timed["samples_ms"],
                         tforge_status="ok", spread=timed["spread"],
                         sm_clock_mhz=timed.get("sm_clock_mhz_after"))
            if "energy_j" in timed:  # Kernel Tuner's NVML observer's names: J a launch, W
                entry.update(nvml_energy=timed["energy_j"], nvml_power=timed["power_w"])
        cache[key_of(config, names)] = entry
        if (i + 1) % 50 == 0:
            write(args.out, doc)
            print(f"  {i + 1}/{len(configs)} measured", flush=True)
    measure_wall = clock.perf_counter() - start

    write(args.out, doc)
    ok = [e for e in cache.values() if isinstance(e["time"], float)]
    best = min(ok, key=lambda e: e["time"]) if ok else None
    mean = lambda field: sum(e[field] for e in cache.values()) / max(len(cache), 1)  # noqa: E731
    print(f"measured in {measure_wall:.1f} s: {len(ok)} ok of {len(cache)} (per configuration: "
          f"check {mean('verification_time'):.0f} ms, timing {mean('benchmark_time'):.0f} ms)",
          flush=True)
    for base in task["baseline"]:
        entry = cache.get(key_of(base, names)) if all(n in base for n in names) else None
        if entry and best and isinstance(entry["time"], float):
            print(f"baseline {entry['time']:.4f} ms, best {best['time']:.4f} ms: "
                  f"{entry['time'] / best['time']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
