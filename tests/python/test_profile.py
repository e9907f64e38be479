"""The worker's profile request without a GPU: the launch's facts (grid as evaluated, warps, the
task's bytes and flops), counters "none" with a note, the kernel never run."""

import os
import shutil

import pytest

from conftest import FIXTURES
from tforge_worker import load_task, profile

TUNE = {"N": 1 << 20}


def test_interpreter_profile_has_the_launch_and_no_counters(add_task, write_task):
    got = profile(load_task(write_task(add_task)), {"BLOCK": 256, "num_warps": 2}, TUNE)
    assert got["status"] == "ok"
    assert got["grid_blocks"] == (1 << 20) // 256 and got["num_warps"] == 2
    assert got["counters"] == "none" and got["metrics"] == {}
    assert "no GPU" in got["note"]
    assert "device" not in got
    # the task gives no cost: bytes are the tensors' (x, y read; out written), flops unknown
    assert got["bytes"] == 3 * 4 * (1 << 20) and got["flops"] is None


def test_num_warps_defaults_to_tritons(add_task, write_task):
    got = profile(load_task(write_task(add_task)), {"BLOCK": 128}, TUNE)
    assert got["num_warps"] == 4 and got["grid_blocks"] == (1 << 20) // 128


def test_a_callable_grid_through_the_files_own_function(add_task, write_task, tmp_path):
    """launch.call: the file's function launches with a grid lambda over the meta-parameters."""
    shutil.copy(os.path.join(FIXTURES, "lambda_grid.py"), tmp_path / "lambda_grid.py")
    add_task.update(source="lambda_grid.py", kernel="add", reference="lambda_grid:reference",
                    launch={"call": "lambda_grid:add_with_lambda_grid", "args": ["x", "y", "out"]})
    got = profile(load_task(write_task(add_task)), {"BLOCK": 512, "num_warps": 8}, TUNE)
    assert got["status"] == "ok", got
    assert got["grid_blocks"] == (1 << 20) // 512 and got["num_warps"] == 8


def test_a_task_cost_gives_bytes_and_flops(add_task, write_task):
    add_task["cost"] = {"bytes": "12 * N", "flops": "N"}
    got = profile(load_task(write_task(add_task)), {"BLOCK": 128}, TUNE)
    assert got["bytes"] == 12 * (1 << 20) and got["flops"] == 1 << 20


def test_a_variant_that_does_not_load_is_a_failed_compile(add_task, write_task):
    got = profile(load_task(write_task(add_task)), {"BLOCK": 128}, TUNE, variant="def (:\n")
    assert got["status"] == "compile"


@pytest.mark.parametrize("counters", [True, False])
def test_counters_asked_or_not_without_a_gpu(add_task, write_task, counters):
    got = profile(load_task(write_task(add_task)), {"BLOCK": 128}, TUNE, counters=counters)
    assert got["counters"] == "none"
