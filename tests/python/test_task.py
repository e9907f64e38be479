"""Manifest validation: a good task passes; every malformed field is named with its JSON path."""

import json
import os

import pytest

from tforge_worker import TaskError, load_task
from tforge_worker.task import cost_at, read, validate


def test_good_task_is_normalised(add_task, write_task):
    spec = read(write_task(add_task))
    assert spec["inputs"][2]["init"] == "zeros"  # outputs need no init
    assert spec["inputs"][0]["scale"] == 1.0
    assert spec["outputs"][0]["poison"] is True
    assert spec["writes_inputs"] is False
    assert spec["baseline"] == [{"BLOCK": 128, "num_warps": 4, "num_stages": 1}]
    json.dumps(spec)  # JSON-able, for the C side


def _set(doc, path, value):
    """Set (or, with value DELETE, remove) doc[path] for a dotted path with [i] indices."""
    keys = path.replace("[", ".").replace("]", "").split(".")
    for k in keys[:-1]:
        doc = doc[int(k)] if isinstance(doc, list) else doc[k]
    last = int(keys[-1]) if isinstance(doc, list) else keys[-1]
    if value is DELETE:
        del doc[last]
    else:
        doc[last] = value


DELETE = object()

BAD = [
    ("source", "missing.py", "source"),
    ("source", 3, "source"),
    ("kernel", "not an identifier", "kernel"),
    ("inputs[1].dtype", "float17", "inputs[1].dtype"),
    ("inputs[0].shape", "N", "inputs[0].shape"),
    ("inputs[0].shape", ["N", "M +"], "inputs[0].shape[1]"),
    ("inputs[0].shape", ["N", "__import__('os')"], "inputs[0].shape[1]"),
    ("inputs[0].shape", [-1], "inputs[0].shape[0]"),
    ("inputs[0].init", "gauss", "inputs[0].init"),
    ("inputs[0].init", "randint:5:1", "inputs[0].init"),
    ("inputs[0].init", DELETE, "inputs[0].init"),
    ("inputs[0].scale", "big", "inputs[0].scale"),
    ("inputs[0].shap", ["N"], "inputs[0].shap"),
    ("inputs[1].name", "x", "inputs[1].name"),
    ("inputs", [], "inputs"),
    ("inputs_fn", "planted:ints", "inputs"),
    ("outputs[0].atol", -1, "outputs[0].atol"),
    ("outputs[0].rtol", "1e-3", "outputs[0].rtol"),
    ("outputs[0].name", "nope", "outputs[0].name"),
    ("outputs[0].poison", "yes", "outputs[0].poison"),
    ("outputs", [], "outputs"),
    ("launch", {}, "launch"),
    ("launch.grid", "(N,", "launch.grid"),
    ("launch.args[1]", {"y": 1}, "launch.args[1]"),
    ("launch.argz", [], "launch.argz"),
    ("launch", {"wrapper": "no-colon"}, "launch.wrapper"),
    ("reference", "planted.reference", "reference"),
    ("shapes.check", [], "shapes.check"),
    ("shapes.tune[0].N", 0, "shapes.tune[0].N"),
    ("shapes.check[0]", {"M": 3}, "shapes.check[0]"),
    ("shapes.extra", [], "shapes.extra"),
    ("baseline.num_warps", 0, "baseline.num_warps"),
    ("baseline.BLOCK", [128], "baseline.BLOCK"),
    ("baseline", [], "baseline"),
    ("baseline", [{"BLOCK": 64}, "x"], "baseline[1]"),
    ("writes_inputs", "no", "writes_inputs"),
    ("space.params.BLOCK", [], "space.params.BLOCK"),
    ("space.params.BLOCK", [64, 64], "space.params.BLOCK"),
    ("space.params.num_warps", [0, 4], "space.params.num_warps"),
    ("space.constraints[0]", "BLOCK <", "space.constraints[0]"),
    ("space.constraints[0]", "FOO > 1", "space.constraints[0]"),
    ("space.constraints[0]", "__import__('os').getpid() > 0", "space.constraints[0]"),
    ("space.constraints[0]", "len(BLOCK) > 0", "space.constraints[0]"),
    ("kernal", "add_ok", "kernal"),
    ("launch", {"call": "planted:f", "args": ["x"], "extra": 1}, "launch.extra"),
    ("launch", {"call": "planted:f", "returns": ["1x"]}, "launch.returns"),
    ("launch.kwargs", {"ACT": ["x"]}, "launch.kwargs.ACT"),
    ("launch.kwargs", {"1A": "2"}, "launch.kwargs.1A"),
    ("outputs[0].name", "nothing", "outputs[0].name"),
    ("baseline.BLOCK", {"expr": "N +"}, "baseline.BLOCK.expr"),
    ("baseline.BLOCK", {"exp": "N"}, "baseline.BLOCK"),
    ("baseline", "no colon", "baseline"),
    ("reference", "baselines", "reference"),
    ("cost", 5, "cost"),
    ("cost", {"bytes": "N +"}, "cost.bytes"),
    ("cost", {"flops": "2 * N * BLOCK"}, "cost.flops"),
    ("cost", {"flop": "N"}, "cost.flop"),
]


@pytest.mark.parametrize("path,value,field", BAD, ids=[f"{b[0]}={b[1]!r}" for b in BAD])
def test_each_malformed_field_is_named(add_task, write_task, path, value, field):
    _set(add_task, path, value)
    task_file = write_task(add_task)
    with pytest.raises(TaskError) as info:
        read(task_file)
    errors = info.value.errors
    assert any(e.startswith(f"{task_file}: {field}: ") for e in errors), errors
    assert all("expected" in e for e in errors)


def test_every_problem_is_reported_at_once(add_task, write_task):
    add_task["kernel"] = 7
    add_task["inputs"][1]["dtype"] = "half"
    add_task["outputs"][0]["atol"] = None
    with pytest.raises(TaskError) as info:
        read(write_task(add_task))
    fields = [e.split(": ")[1] for e in info.value.errors]
    assert sorted(fields) == ["inputs[1].dtype", "kernel", "outputs[0].atol"]


def test_not_json_names_the_position(tmp_path):
    path = tmp_path / "task.json"
    path.write_text('{"source": "k.py",\n  "kernel": }')
    with pytest.raises(TaskError, match=r"task.json:2:\d+: not JSON"):
        read(str(path))


def test_a_fifo_or_a_directory_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "task.json"
    os.mkfifo(fifo)
    with pytest.raises(TaskError, match=r"task.json: not a regular file \(a FIFO"):
        read(str(fifo))
    with pytest.raises(TaskError, match=r": not a regular file \(a directory\)"):
        read(str(tmp_path))


def test_top_level_must_be_an_object():
    with pytest.raises(TaskError, match=r"\(top level\): expected an object"):
        validate([1, 2], "/x/task.json")


def test_writes_inputs_is_inferred_from_unpoisoned_outputs(add_task, write_task):
    add_task["outputs"][0]["poison"] = False
    assert read(write_task(add_task))["writes_inputs"] is True


SEMANTIC = [
    ("kernel", "no_such_kernel", "kernel"),
    ("kernel", "reference", "kernel"),  # a function, but no Triton kernel
    ("space.params.BLOCKK", [1], "space.params.BLOCKK"),
    ("baseline.BLOK", 1, "baseline[0].BLOK"),
    ("launch.grid", "(triton.cdiv(N, BLOK),)", "launch.grid"),
    ("launch.args", ["x", "y", "out", "N", "M", "K"], "launch.args"),
    ("launch.args", ["x", "y"], "launch.args"),
    ("reference", "planted:no_such_function", "reference"),
    ("reference", "no_such_module:f", "reference"),
    ("launch.kwargs", {"ACT": "1"}, "launch.kwargs.ACT"),
    ("launch.kwargs", {"N": "1"}, "launch.kwargs.N"),
]


@pytest.mark.parametrize("path,value,field", SEMANTIC, ids=[f"{s[0]}={s[1]!r}" for s in SEMANTIC])
def test_fields_checked_against_the_kernel(add_task, write_task, path, value, field):
    _set(add_task, path, value)
    task_file = write_task(add_task)
    with pytest.raises(TaskError) as info:
        load_task(task_file)
    assert any(e.startswith(f"{task_file}: {field}: ") for e in info.value.errors), \
        info.value.errors


def test_baseline_defaults_to_the_kernels_defaults(tmp_path):
    (tmp_path / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(x, n, BLOCK: tl.constexpr = 64):\n    pass\n\n"
        "def ref(inputs):\n    return inputs['x']\n")
    doc = {"source": "k.py", "kernel": "k", "reference": "k:ref",
           "inputs": [{"name": "x", "shape": ["N"], "dtype": "float32"}],
           "outputs": [{"name": "x", "atol": 0, "rtol": 0}],
           "launch": {"grid": "(1,)", "args": ["x", "N"]},
           "shapes": {"tune": [{"N": 8}], "check": [{"N": 8}]}}
    (tmp_path / "task.json").write_text(json.dumps(doc))
    spec = load_task(str(tmp_path / "task.json"))
    assert spec["baseline_from"] == "defaults"
    assert spec["baseline"] == [{"BLOCK": 64, "num_warps": 4, "num_stages": 3}]
    assert [p["name"] for p in spec["kernel_params"]] == ["x", "n", "BLOCK"]


@pytest.mark.parametrize("text, expected", [
    (b'{"source": NaN}', "not JSON: NaN is not a number JSON allows"),
    (b'{"source": -Infinity}', "not JSON: -Infinity is not a number JSON allows"),
    (b'{"source": 1e400}', "not JSON: 1e400 is too large for a number"),
    (b'{"description": "\xe9t\xe9"}', r"not UTF-8 text \(byte 0xe9 at offset 17\)"),
    (b"[" * 100000 + b"]" * 100000, "not JSON this engine reads: nested too deeply"),
])
def test_files_that_are_not_json_text_are_named(tmp_path, text, expected):
    path = tmp_path / "task.json"
    path.write_bytes(text)
    with pytest.raises(TaskError, match=f"{path}: {expected}"):
        read(str(path))


def test_constraints_may_name_shape_symbols(add_task, write_task):
    add_task["space"]["constraints"] = ["BLOCK * 8 <= N"]
    spec = load_task(write_task(add_task))
    assert spec["plans"][0]["space"]["constraints"] == [f"BLOCK * 8 <= {1 << 20}"]


def test_cost_from_the_task_or_from_the_tensors(add_task, write_task):
    shape = {"N": 1000}
    # no cost given: the compulsory traffic, x and y read, out written (float32)
    assert cost_at(read(write_task(add_task)), shape) == {
        "bytes": 3 * 1000 * 4.0, "flops": None, "bytes_from": "tensors"}
    # an output the kernel also reads (not poisoned) is read and written
    add_task["outputs"][0]["poison"] = False
    assert cost_at(read(write_task(add_task)), shape)["bytes"] == 4 * 1000 * 4.0
    add_task["cost"] = {"bytes": "12 * N", "flops": "N"}
    assert cost_at(read(write_task(add_task)), shape) == {
        "bytes": 12000.0, "flops": 1000.0, "bytes_from": "task"}
