"""A tune's winner re-run as its user runs it, and timed against the file's own launch.

Usage: rerun.py RUN_DIR (a `tforge tune --out` folder: result.json names the task and the
winner). In this fresh process, best_variant.py and best_config.py are imported from RUN_DIR the
way the tune's take-home check imports them, the file's own entry point (the task's launch.call
function, or the kernel launched with the config) is called on the same inputs at the tuning
shape through the file as it is and through best_variant.py, and both are timed with
triton.testing.do_bench in interleaved rounds, each call whole (the function's allocations
included, as the user pays them). Prints one JSON line: {file_ms, winner_ms, speedup, rounds}
or {error}.
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "engine", "worker", "python"))

ROUNDS = 5


def main():
    import torch
    import triton
    from tforge_worker import takehome, worker

    out = os.path.abspath(sys.argv[1])
    result = json.load(open(os.path.join(out, "result.json")))
    loaded = worker.get(worker.load_task(result["task"]))
    spec = loaded.spec
    shape = spec["shapes"]["tune"][0]
    module, best_config = takehome._import(out, spec["source"])
    winner = takehome._tuned_config(best_config.BEST, result["best"]["config"])
    baseline = worker._baselines_at(loaded, shape)[0]
    inputs = worker.make_inputs(loaded, shape, seed=3)

    def launcher(mod, kernel, config):
        best = triton.Config({k: v for k, v in config.items() if k not in takehome.LAUNCH_OPTIONS},
                             **{k: v for k, v in config.items() if k in takehome.LAUNCH_OPTIONS})
        return lambda: takehome._launch(spec, loaded, mod, kernel, inputs, shape, config, best)

    runs = {"file": launcher(loaded.module, loaded.kernel, baseline),
            "winner": launcher(module, getattr(module, spec["kernel"]), winner)}
    times = {k: [] for k in runs}
    for _ in range(ROUNDS):
        for name, run in runs.items():
            times[name].append(triton.testing.do_bench(run, warmup=25, rep=100))
    torch.cuda.synchronize()
    file_ms, winner_ms = (statistics.median(times[k]) for k in ("file", "winner"))
    print(json.dumps({"file_ms": file_ms, "winner_ms": winner_ms, "speedup": file_ms / winner_ms,
                      "rounds": ROUNDS}))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a row of the table, never a crash of the suite
        print(json.dumps({"error": f"{type(e).__name__}: {e}"[:300]}))
