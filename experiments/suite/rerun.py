"""A tune's best_variant.py re-run as its user runs it, and on a GPU timed against the file's
own launch.

Usage: rerun.py RUN_DIR (a `tforge tune --out` folder: result.json names the task and the
winner). In this fresh process, best_variant.py is imported from RUN_DIR the way the tune's
take-home check imports it, and the file's own entry point (the task's launch.call function, or
the kernel launched with the config) is called through it at the check shape and compared with
the reference: with the winner's config, or the baseline's where nothing was timed (an
interpreter tune names no winner, and its best_variant.py is the file as it is). On a GPU, the
entry point is then called on the same inputs at the tuning shape through the file as it is and
through best_variant.py, and both are timed with triton.testing.do_bench in interleaved rounds,
each call whole (the function's allocations included, as the user pays them).
With a second argument EXPR (Python over the task's inputs, `torch` and `F`, as
experiments/transforms/compare.py takes it: "torch.matmul(a, b)"), the vendor's op is timed in
the same rounds on the same inputs.
Prints one JSON line: {check, message, file_ms, winner_ms[, vendor_ms]} (the times on a GPU) or
{error}.
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
    if not torch.cuda.is_available():  # before triton's import: it reads it then
        os.environ.setdefault("TRITON_INTERPRET", "1")
    import triton
    from tforge_worker import takehome, worker

    out = os.path.abspath(sys.argv[1])
    result = json.load(open(os.path.join(out, "result.json")))
    loaded = worker.get(worker.load_task(result["task"]))
    spec = loaded.spec
    with takehome.standin.active():  # a file that asks for the device at import, on a CPU
        module, _ = takehome._import(out, spec["source"])
    kernel = getattr(module, spec["kernel"])

    def launcher(mod, kernel, config, inputs, shape):
        options = takehome.LAUNCH_OPTIONS
        best = triton.Config({k: v for k, v in config.items() if k not in options},
                             **{k: v for k, v in config.items() if k in options})
        return lambda: takehome._launch(spec, loaded, mod, kernel, inputs, shape, config, best)

    check = spec["shapes"]["check"][0]
    winner = result["best"].get("config") or worker._baselines_at(loaded, check)[0]
    inputs = worker.make_inputs(loaded, check, seed=3)
    expected = worker.expected_outputs(loaded, inputs, check)
    actual = worker.outputs_of(loaded, inputs, launcher(module, kernel, winner, inputs, check))
    verdict = worker.judged(loaded, actual, expected)
    got = {"check": verdict["status"], "message": verdict["message"]}
    if torch.cuda.is_available() and result["best"].get("config"):
        shape = spec["shapes"]["tune"][0]
        inputs = worker.make_inputs(loaded, shape, seed=3)
        baseline = worker._baselines_at(loaded, shape)[0]
        runs = {"file": launcher(loaded.module, loaded.kernel, baseline, inputs, shape),
                "winner": launcher(module, kernel, winner, inputs, shape)}
        if len(sys.argv) > 2 and sys.argv[2]:
            import torch.nn.functional as F
            runs["vendor"] = eval(f"lambda: {sys.argv[2]}", {"torch": torch, "F": F, **inputs})
        times = {k: [] for k in runs}
        for _ in range(ROUNDS):
            for name, run in runs.items():
                times[name].append(triton.testing.do_bench(run, warmup=25, rep=100))
        got.update({f"{name}_ms": statistics.median(t) for name, t in times.items()})
    print(json.dumps(got))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a row of the table, never a crash of the suite
        print(json.dumps({"error": f"{type(e).__name__}: {e}"[:300]}))
