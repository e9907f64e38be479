"""What the speed-of-light model needs of each configuration of a recording and that a recording
without counters lacks: the launch's grid (programs), the task's bytes and flops at the recorded
shape, and whether the kernel has a dot; all from the task itself, by the worker's own functions
(the launch stopped before it compiles, as `tforge profile` finds a launch's facts; no GPU).

    python experiments/roofline/facts.py OUT_DIR RECORDING[=TASK[@SHAPE_INDEX]]...

A recording names its task and shape (`tforge_environment`); one that does not is given them
(`=TASK@INDEX`, the index into the task's tune shapes, default 0). Writes OUT_DIR/<recording's
file name without .json.gz>.facts.json: {"recording", "task", "shape", "bytes", "flops",
"uses_tensor_cores", "grid_blocks": {cache key: programs}}. Run from the repository's root.
"""

import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "engine", "worker",
                                "python"))
from tforge_worker import analyze as analysis  # noqa: E402
from tforge_worker.profiling import _launch_facts  # noqa: E402
from tforge_worker.task import cost_at  # noqa: E402
from tforge_worker.worker import get, load_task, make_inputs  # noqa: E402

KNOB_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def facts(recording, task_path=None, shape_index=0):
    opener = gzip.open if recording.endswith(".gz") else open
    with opener(recording, "rt") as f:
        doc = json.load(f)
    env = doc.get("tforge_environment") or {}
    task_path = task_path or env.get("task")
    if not task_path:
        raise SystemExit(f"{recording}: names no task (tforge_environment.task): give =TASK")
    spec = load_task(task_path)
    shape = env.get("shape") or spec["shapes"]["tune"][shape_index]
    loaded = get(spec)
    inputs = make_inputs(loaded, shape, 0)
    ir = analysis.analyze(os.path.join(os.path.dirname(task_path), spec["source"]),
                          spec["kernel"])
    cost = cost_at(spec, shape)
    grid = {}
    for key, entry in doc["cache"].items():
        config = {k: entry[k] for k in doc["tune_params_keys"]}
        got = _launch_facts(loaded, inputs, config, shape)
        if "grid_blocks" in got:
            grid[key] = got["grid_blocks"]
    return {"recording": os.path.basename(recording), "task": task_path, "shape": shape,
            "bytes": cost["bytes"], "flops": cost["flops"],
            "uses_tensor_cores": int(any(k["dots"] for k in ir["kernels"])), "grid_blocks": grid}


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    for arg in argv[1:]:
        recording, _, given = arg.partition("=")
        task, _, index = given.partition("@")
        doc = facts(recording, task or None, int(index or 0))
        name = os.path.basename(recording).removesuffix(".gz").removesuffix(".json")
        with open(os.path.join(out, name + ".facts.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        print(name, len(doc["grid_blocks"]), "grids, bytes", doc["bytes"], "flops", doc["flops"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
