"""A baseline that leaves parameters of the space to the file's own launch (a wrapper's defaults,
the baseline `{}`) is planned as that launch runs it, per tuning shape: the point a recorded
space can answer. Over tests/fixtures/tasks/wrapper_baseline, whose wrappers choose BLOCK from
the size (by_size) or from the data (by_value)."""

import json
import os

from tforge_worker import load_task

from conftest import EXAMPLES, ROOT

WRAPPED = os.path.join(ROOT, "tests", "fixtures", "tasks", "wrapper_baseline")


def test_a_wrappers_defaults_are_the_baselines_point_at_each_shape():
    spec = load_task(os.path.join(WRAPPED, "task.json"))
    assert spec["baseline_from"] == "wrapper"
    large, small = spec["plans"]
    assert large["baseline"] == [{}] and small["baseline"] == [{}]  # run as the file runs it
    # 2 warps passed, no num_stages: Triton's default
    assert large["launched"] == [{"BLOCK": 256, "num_warps": 2, "num_stages": 3}]
    assert small["launched"] == [{"BLOCK": 64, "num_warps": 2, "num_stages": 3}]


def test_what_a_baseline_sets_stays_and_only_the_rest_is_launched(write_task):
    task = json.load(open(os.path.join(WRAPPED, "task.json")))
    task.update(source=os.path.join(WRAPPED, "kernel.py"), python_path=[WRAPPED],
                baseline={"num_warps": 4})
    spec = load_task(write_task(task))
    assert spec["plans"][0]["launched"] == [{"BLOCK": 256, "num_warps": 4, "num_stages": 3}]


def test_a_launch_that_needs_real_values_leaves_the_baseline_as_it_is():
    spec = load_task(os.path.join(WRAPPED, "task_by_value.json"))
    assert all("launched" not in plan for plan in spec["plans"])


def test_a_baseline_that_sets_every_parameter_has_nothing_launched(add_task, write_task):
    spec = load_task(write_task(add_task))
    assert "launched" not in spec["plans"][0]


def test_the_attention_example_is_planned_at_its_wrappers_defaults():
    spec = load_task(os.path.join(EXAMPLES, "attention", "task.json"))
    for plan in spec["plans"]:
        assert plan["baseline"] == [{}]
        assert plan["launched"] == [{"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4,
                                     "num_stages": 1}]
