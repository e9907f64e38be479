"""What is the task's fault (TaskError: the engine exits 2 naming the field) and what is the run's
(a candidate's status): the edges tests/cli/exit_codes.sh cannot reach through the command."""

import pytest
import torch

from tforge_worker import TaskError, load_task, run_check

CHECK = {"N": 1000}
BASE = {"BLOCK": 128, "num_warps": 4}

CALLS = '''
import functools

import triton

import planted


def add(x, y, out, n):
    planted.add_ok[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)


def add_then_raise(x, y, out, n):
    add(x, y, out, n)
    raise TypeError("a TypeError of the function's own")


def logged(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*args, **kwargs)
    return call


@logged
def logged_add(x, y, out, n):
    add(x, y, out, n)
'''


def _called(add_task, write_task, tmp_path, function, args):
    (tmp_path / "calls.py").write_text(CALLS)
    add_task["launch"] = {"call": f"calls:{function}", "args": args}
    return load_task(write_task(add_task))


def test_arguments_the_function_cannot_take_are_the_tasks(add_task, write_task, tmp_path):
    spec = _called(add_task, write_task, tmp_path, "add", ["x", "y", "out"])
    with pytest.raises(TaskError, match=r"launch.args: expected the arguments calls:add takes, "
                                        r"got 3 argument\(s\): TypeError: add\(\) missing"):
        run_check(spec, BASE, CHECK, seed=1)
    # through a decorator the refusal comes from inside it: the function's signature tells
    spec = _called(add_task, write_task, tmp_path, "logged_add", ["x", "y", "out"])
    with pytest.raises(TaskError, match="launch.args: expected the arguments calls:logged_add"):
        run_check(spec, BASE, CHECK, seed=1)
    spec = _called(add_task, write_task, tmp_path, "logged_add", ["x", "y", "out", "N"])
    assert run_check(spec, BASE, CHECK, seed=1)["status"] == "ok"


def test_a_type_error_of_the_function_itself_is_the_runs(add_task, write_task, tmp_path):
    spec = _called(add_task, write_task, tmp_path, "add_then_raise", ["x", "y", "out", "N"])
    result = run_check(spec, BASE, CHECK, seed=1)
    assert result["status"] == "runtime" and "of the function's own" in result["message"]


def test_a_wrapper_of_another_signature_is_the_tasks(add_task, write_task):
    spec = load_task(write_task(dict(add_task, launch={"wrapper": "planted:reference"})))
    with pytest.raises(TaskError, match=r"launch.wrapper: expected a function called as "
                                        r"function\(inputs, config\), got 2 argument\(s\)"):
        run_check(spec, BASE, CHECK, seed=1)


@pytest.mark.parametrize("grid", ["'abc'", "(1, 2, 3, 4)", "()", "(2.0,)", "(-1,)", "(True,)"])
def test_a_grid_triton_cannot_launch_is_the_tasks(add_task, write_task, grid):
    add_task["launch"]["grid"] = grid
    spec = load_task(write_task(add_task))
    with pytest.raises(TaskError, match="launch.grid: expected 1 to 3 block counts"):
        run_check(spec, BASE, CHECK, seed=1)


def test_a_grid_of_the_files_own_function_is_checked_too(add_task, write_task, tmp_path):
    spec = _called(add_task, write_task, tmp_path, "add", ["x", "y", "out", "N"])
    spec = load_task(write_task(dict(add_task, launch=dict(spec["launch"], grid="(n, 0.5)"))))
    with pytest.raises(TaskError, match=r"launch.grid: expected 1 to 3 block counts .*, got "
                                        r"\(1000, 0.5\) from '\(n, 0.5\)'"):
        run_check(spec, BASE, CHECK, seed=1)


def test_grids_triton_launches_still_pass(add_task, write_task):
    for grid in ["triton.cdiv(N, BLOCK)", "[triton.cdiv(N, BLOCK), 1]"]:
        add_task["launch"]["grid"] = grid
        assert run_check(load_task(write_task(add_task)), BASE, CHECK, seed=1)["status"] == "ok"


def test_inputs_the_allocator_refuses_name_the_shape(add_task, write_task, monkeypatch):
    spec = load_task(write_task(add_task))

    def refuse(*args, **kwargs):
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory\nframe #0: c10::Error")
    monkeypatch.setattr(torch, "randn", refuse)
    with pytest.raises(TaskError) as e:
        run_check(spec, BASE, CHECK, seed=1)
    assert str(e.value).endswith(": shapes.check[0]: expected sizes whose inputs can be made on "
                                 "cpu, got {'N': 1000}: inputs[0] (x) failed: RuntimeError: "
                                 "DefaultCPUAllocator: can't allocate memory")


def test_sizes_past_int64_from_an_expression_name_the_field(add_task, write_task):
    add_task["inputs"][0]["shape"] = ["N * 9223372036854775807"]
    spec = load_task(write_task(add_task))
    with pytest.raises(TaskError, match=r"inputs\[0\].shape\[0\]: 'N \* 9223372036854775807' is "
                                        r"\d+ at shape \{'N': 1000\}: expected a size from 0 to "):
        run_check(spec, BASE, CHECK, seed=1)


def test_lone_surrogates_are_refused_wherever_they_are(add_task, write_task):
    add_task["description"] = "ok \U0001F600 \ud800"
    add_task["inputs"][1]["na\udc01me"] = 1
    with pytest.raises(TaskError) as e:
        load_task(write_task(add_task))
    lines = str(e.value).splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(": description: expected text of Unicode characters, got a lone "
                             "UTF-16 surrogate escape \\ud800 at character 5")
    assert lines[1].endswith(": inputs[1].'na\\udc01me': expected a field name of Unicode "
                             "characters (a lone UTF-16 surrogate escape, \\ud800 to \\udfff, is "
                             "none)")
