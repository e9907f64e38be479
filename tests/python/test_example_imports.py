"""Every example's kernel file imports on a CPU the way the take-home check imports the winner's
best_variant.py (a fresh python, the stand-in GPU, Triton's interpreter), top-level demo and
all, in well under the check's 600 s: a file that takes longer gets its winner refused on any
machine without a GPU (the softmax demo's 4096-row benchmarks took about 19 minutes)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import EXAMPLES, ROOT

WORKER = os.path.join(ROOT, "engine", "worker", "python")
SECONDS = 120  # a loaded machine of two cores imports torch and Triton in about 10

NAMES = sorted(d for d in os.listdir(EXAMPLES) if os.path.isfile(os.path.join(EXAMPLES, d,
                                                                             "task.json")))


@pytest.mark.parametrize("name", NAMES)
def test_example_imports_in_the_interpreter(name):
    with open(os.path.join(EXAMPLES, name, "task.json")) as f:
        source = os.path.join(EXAMPLES, name, json.load(f)["source"])
    code = textwrap.dedent("""
        import importlib.util, sys
        from tforge_worker import standin
        spec = importlib.util.spec_from_file_location("best_variant", sys.argv[1])
        with standin.active():
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        """)
    env = dict(os.environ, PYTHONPATH=WORKER, TRITON_INTERPRET="1")
    try:
        done = subprocess.run([sys.executable, "-c", code, source], env=env,
                              capture_output=True, text=True, timeout=SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{source}: importing it in the interpreter took over {SECONDS} s")
    assert done.returncode == 0, done.stderr[-3000:]
