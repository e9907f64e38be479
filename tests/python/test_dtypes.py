"""A task's `dtypes`: validated where task.json is read (a list of floating dtype names, not with
an inputs_fn), and a dtype it allows makes its floating inputs in that dtype, the others as they
are; one it does not allow is the task's error naming the field."""

import os

import pytest
import torch

from tforge_worker import TaskError, make_inputs
from tforge_worker.task import read
from tforge_worker.worker import get

from conftest import ROOT

TASK = os.path.join(ROOT, "tests", "fixtures", "tasks", "dtypes", "task.json")


@pytest.mark.parametrize("dtypes", ["float16", [], ["float16", "float17"], ["int32"],
                                    ["float16", "float16"]])
def test_malformed_dtypes_are_named(add_task, write_task, dtypes):
    add_task["dtypes"] = dtypes
    path = write_task(add_task)
    with pytest.raises(TaskError) as e:
        read(path)
    assert any(line.startswith(f"{path}: dtypes: expected a non-empty list of distinct "
                               "floating dtypes") for line in e.value.errors)


def test_dtypes_need_declared_inputs(add_task, write_task):
    add_task.pop("inputs")
    add_task["inputs_fn"] = "planted:make_inputs"
    add_task["dtypes"] = ["float16"]
    path = write_task(add_task)
    with pytest.raises(TaskError) as e:
        read(path)
    assert any(line.startswith(f"{path}: dtypes: expected no dtypes with an inputs_fn")
               for line in e.value.errors)


def test_absent_dtypes_are_none(add_task, write_task):
    assert read(write_task(add_task))["dtypes"] is None


def test_a_dtype_makes_the_floating_inputs_only():
    made = make_inputs(get(TASK, "float32"), {"N": 10}, 0, "cpu")
    assert [made[n].dtype for n in ("x", "y", "out", "count")] == \
        [torch.float32, torch.float32, torch.float32, torch.int32]
    own = make_inputs(get(TASK), {"N": 10}, 0, "cpu")  # the task as declared, beside it
    assert own["x"].dtype == torch.float16
    assert torch.equal(made["x"].to(torch.float16), own["x"])  # the same draw, cast


def test_a_dtype_the_task_does_not_allow_is_refused():
    with pytest.raises(TaskError, match=r"task\.json: dtypes: expected 'bfloat16' among the "
                                        r"task's dtypes, got \['float32', 'float16'\]"):
        get(TASK, "bfloat16")
