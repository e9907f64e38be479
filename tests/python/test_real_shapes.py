"""Tasks over files written the way real ones are (fixtures/real_shapes/): the file's own
wrapper as the launch, outputs it returns, baselines per shape, fixed constexprs after the
tuned ones, the launch's own output as the reference."""

import json
import os

import pytest
import torch

from conftest import FIXTURES
from tforge_worker import load_task, make_inputs, run_check
from tforge_worker.task import TaskError
from tforge_worker.worker import get, launch

REAL = os.path.join(FIXTURES, "real_shapes")


def test_the_wrapper_gets_the_config_and_its_return_value_is_compared():
    task = load_task(os.path.join(REAL, "scale_rows_task.json"))
    # a block that covers the row passes; one that does not leaves poisoned outputs
    assert run_check(task, {"BLOCK_SIZE": 128, "num_warps": 2}, {"R": 3, "C": 100})["status"] \
        == "ok"
    bad = run_check(task, {"BLOCK_SIZE": 64, "num_warps": 4}, {"R": 3, "C": 100})
    assert bad["status"] == "wrong" and "not finite" in bad["message"]


def test_launch_kwargs_reach_the_wrapper():
    task = load_task(os.path.join(REAL, "scale_rows_task.json"))
    loaded = get(task)
    shape = {"R": 2, "C": 10}
    inputs = make_inputs(loaded, shape, 0)
    y = launch(loaded, inputs, {"BLOCK_SIZE": 16, "num_warps": 1}, shape)
    assert torch.equal(y, torch.relu(inputs["x"] * 1.5))  # act='relu', factor 1.5


def test_baselines_per_shape_from_expressions():
    plans = load_task(os.path.join(REAL, "scale_rows_task.json"))["plans"]
    assert [p["baseline"] for p in plans] == [[{"BLOCK_SIZE": 1024, "num_warps": 4}],
                                              [{"BLOCK_SIZE": 4096, "num_warps": 8}]]
    assert [p["space"]["constraints"] for p in plans] == [["BLOCK_SIZE >= 1000"],
                                                          ["BLOCK_SIZE >= 3000"]]


def test_a_grid_recomputed_from_the_kernels_arguments():
    task = load_task(os.path.join(REAL, "add_task.json"))
    assert task["baseline"] == [{"BLOCK": 1024, "num_warps": 4}]  # baselines:for_shape
    for block in (128, 2048):
        assert run_check(task, {"BLOCK": block, "num_warps": 4}, {"N": 3000})["status"] == "ok"


def test_without_the_grid_a_changed_block_is_caught(tmp_path):
    doc = json.load(open(os.path.join(REAL, "add_task.json")))
    del doc["launch"]["grid"]
    doc["source"] = os.path.join(REAL, "rows.py")
    doc["baseline"] = {"BLOCK": 1024}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    task = load_task(str(path))
    # the wrapper's grid assumes BLOCK=1024: a block of 128 covers an eighth of the elements
    assert run_check(task, {"BLOCK": 128, "num_warps": 4}, {"N": 3000})["status"] == "wrong"


def test_a_baseline_function_that_fails_is_the_tasks_error(tmp_path):
    doc = json.load(open(os.path.join(REAL, "add_task.json")))
    doc["source"] = os.path.join(REAL, "rows.py")
    (tmp_path / "baselines.py").write_text("def for_shape(shape):\n    return shape['M']\n")
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TaskError, match=r"baseline: baselines:for_shape failed at shape "
                                        r"\{'N': 100000\}: KeyError"):
        load_task(str(path))


def test_a_missing_return_value_is_named(tmp_path):
    doc = json.load(open(os.path.join(REAL, "add_task.json")))
    doc["source"] = os.path.join(REAL, "rows.py")
    doc["launch"]["returns"] = ["out", "extra"]
    doc["outputs"].append({"name": "extra", "atol": 0, "rtol": 0})
    doc["baseline"] = {"BLOCK": 1024}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TaskError, match=r"launch.returns: expected rows:add to return 2"):
        run_check(load_task(str(path)), {"BLOCK": 256}, {"N": 100})


def test_inputs_fn_draws_on_torchs_default_device(tmp_path, add_task, write_task):
    (tmp_path / "made.py").write_text(
        "import torch\n"
        "def inputs(shape, gen):\n"
        "    assert gen.device == torch.empty(0).device\n"
        "    n = shape['N']\n"
        "    return {'x': torch.randn(n, generator=gen), 'y': torch.rand(n, generator=gen),\n"
        "            'out': torch.zeros(n)}\n")
    del add_task["inputs"]
    add_task["inputs_fn"] = "made:inputs"
    task = load_task(write_task(add_task))
    assert run_check(task, {"BLOCK": 128, "num_warps": 4}, {"N": 1000})["status"] == "ok"


def test_without_a_space_the_analysis_infers_one(tmp_path):
    doc = json.load(open(os.path.join(REAL, "add_task.json")))
    doc["source"] = os.path.join(REAL, "rows.py")
    doc["baseline"] = {"BLOCK": 1024, "num_warps": 4}
    del doc["space"]
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    (plan,) = load_task(str(path))["plans"]
    assert plan["inferred"] is True
    assert {256, 1024, 4096} <= set(plan["space"]["params"]["BLOCK"])
    assert 4 in plan["space"]["params"]["num_warps"]
