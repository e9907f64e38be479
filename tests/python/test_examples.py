"""Every example kernel: the task loads, and its baseline configs pass on the check shapes."""

import json
import os

import pytest

from conftest import EXAMPLES
from tforge_worker import load_task, run_check
from tforge_worker.task import eval_expression

NAMES = sorted(d for d in os.listdir(EXAMPLES) if os.path.isfile(os.path.join(EXAMPLES, d,
                                                                             "task.json")))


def test_all_ten_examples_are_there():
    assert NAMES == ["attention", "attention_causal", "conv2d", "layer_norm", "matmul",
                     "rms_norm", "rope", "skinny_gemm", "softmax", "vector_add"]


@pytest.mark.parametrize("name", NAMES)
def test_baseline_passes_on_check_shapes(name):
    spec = load_task(os.path.join(EXAMPLES, name, "task.json"))
    json.dumps(spec)
    for config in spec["baseline"]:
        for shape in spec["shapes"]["check"]:
            result = run_check(spec, config, shape, seed=7)
            assert result["status"] == "ok", (config, shape, result)
            json.dumps(result)


def _feasible(space, config):
    return all(eval_expression(c, config) for c in space["constraints"])


def _has_space(name):
    with open(os.path.join(EXAMPLES, name, "task.json")) as f:
        return "space" in json.load(f)


@pytest.mark.parametrize("name", [n for n in NAMES if _has_space(n)])
def test_another_point_of_the_space_passes(name):
    """The largest-block feasible point: the space's knobs are wired to the kernel."""
    spec = load_task(os.path.join(EXAMPLES, name, "task.json"))
    space = spec["space"]
    config = {k: v[-1] for k, v in space["params"].items()}
    config.update(num_warps=2, num_stages=1)
    for k, values in space["params"].items():
        while not _feasible(space, config) and k.startswith("BLOCK") and \
                values.index(config[k]) > 0:
            config[k] = values[values.index(config[k]) - 1]
    assert _feasible(space, config), config
    result = run_check(spec, config, spec["shapes"]["check"][0], seed=11)
    assert result["status"] == "ok", (config, result)


def test_demos_in_examples_are_dropped():
    spec = load_task(os.path.join(EXAMPLES, "vector_add", "task.json"))
    assert {d["kind"] for d in spec["dropped"]} == {"assign", "call"}
    spec = load_task(os.path.join(EXAMPLES, "softmax", "task.json"))
    assert "for" in {d["kind"] for d in spec["dropped"]}


def test_baseline_sources():
    sources = {n: load_task(os.path.join(EXAMPLES, n, "task.json"))["baseline_from"]
               for n in NAMES}
    assert sources["rms_norm"] == "autotune"
    assert sources["attention"] == "wrapper"
    assert sources["matmul"] == "task"
    assert sources["skinny_gemm"] == "autotune"
