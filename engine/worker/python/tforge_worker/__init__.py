"""TritonForge's worker side: what runs inside a worker process's embedded Python.

Entry points (plain functions over JSON-able values, for the C engine):
    load_task(path) -> manifest dict
    run_check(task, config, shape, seed) -> {status, message, max_abs_err, bad, fatal}
    compile(task, config, shape) -> {status, registers, spills, shared_bytes, ...}
    time(task, config, shape, ...) -> {status, median_ms, min_ms, iqr_ms, spread, n, ...}
    profile(task, config, shape, ...) -> {status, counters, note, metrics, grid_blocks, ...}
    takehome.launch_hook(task, config, text) -> {text, at}: best_variant.py's launch hook
    takehome.verify(out, task, config, shape) -> {status, message, dropped}: the take-home
        files in `out` imported and launched as the user does, in a fresh process
    peaks.cached() -> path: the GPU's device file (its measured peaks), measured once
    proposal.check_answer(answer, kernel, source) -> {status: ok|refused, source, reason}: a
        model's answer checked before anything of it runs
`task` is the dict load_task returned (or the task file's path). An exception an entry point
raises reaches the engine as its class's name (the response's `kind`, "TaskError") and its
message (`error`), two fields.
"""

from .task import TaskError
from .loader import LoadError
from .worker import environment, load_task, make_inputs, run_check
from .bench import time
from .build import compile
from .profiling import profile

# Every function the engine calls, as "module.function"; engine/worker/rpc.c has one C function
# for each (tests/engine/rpc.c checks that the two sides name the same ones and fields).
ENTRY_POINTS = (
    "tforge_worker.load_task",
    "tforge_worker.environment",
    "tforge_worker.compile",
    "tforge_worker.run_check",
    "tforge_worker.time",
    "tforge_worker.profile",
    "tforge_worker.worker.device",
    "tforge_worker.worker.check_task",
    "tforge_worker.analyze.analyze",
    "tforge_worker.capture.capture",
    "tforge_worker.capture.init",
    "tforge_worker.variants.unified_diff",
    "tforge_worker.takehome.launch_hook",
    "tforge_worker.takehome.verify",
    "tforge_worker.peaks.cached",
    "tforge_worker.proposal.check_answer",
)

__all__ = ["ENTRY_POINTS", "TaskError", "LoadError", "environment", "load_task", "make_inputs",
           "run_check", "time", "compile", "profile"]
