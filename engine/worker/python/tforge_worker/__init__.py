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
`task` is the dict load_task returned (or the task file's path).
"""

from .task import TaskError
from .loader import LoadError
from .worker import environment, load_task, make_inputs, run_check
from .bench import time
from .build import compile
from .profiling import profile

__all__ = ["TaskError", "LoadError", "environment", "load_task", "make_inputs", "run_check", "time",
           "compile", "profile"]
