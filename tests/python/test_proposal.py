"""A model's answer checked before anything of it runs (tforge_worker.proposal), then, where it
passes, checked against the reference like any variant."""

import json
import os

import pytest

from conftest import ROOT
from tforge_worker import load_task, run_check
from tforge_worker.proposal import check_answer

LLM = os.path.join(ROOT, "tests", "fixtures", "llm")
with open(os.path.join(LLM, "rowsum.py"), encoding="utf-8") as f:
    SOURCE = f.read()
with open(os.path.join(LLM, "answers.json"), encoding="utf-8") as f:
    ANSWERS = {a["name"]: a for a in json.load(f)}


def checked(text):
    return check_answer(text, "row_sum", SOURCE)


def good_code():
    return checked(ANSWERS["good"]["text"])["source"]


@pytest.mark.parametrize("name, status, reason", [
    ("good", "ok", ""),
    ("wrong", "ok", ""),        # wrong, but only running it can tell
    ("no_compile", "ok", ""),   # the same
    ("hangs", "ok", ""),        # the same: the worker's timeout ends it
    ("imports_os", "refused", "imports os"),
    ("torch_computes", "refused", "calls .sum()"),
    ("caches", "refused", "decorated with _remember"),
    ("no_code", "refused", "no code block"),
])
def test_canned_answers(name, status, reason):
    got = checked(ANSWERS[name]["text"])
    assert got["status"] == status, got["reason"]
    assert reason in got["reason"]
    assert (got["source"] is None) == (status == "refused")


def test_the_users_own_code_is_trusted_as_it_is():
    # the file's reference computes with torch (.sum): kept as it is, it is not the model's
    assert "inputs[\"x\"].sum(dim=1)" in good_code()


def test_a_bare_answer_that_is_python_is_taken():
    got = checked(good_code())
    assert got["status"] == "ok" and got["source"] == good_code()


def test_the_fenced_block_that_defines_the_kernel_is_taken():
    text = "First a helper:\n```python\nx = 1\n```\nThen the file:\n```python\n" + good_code() + \
        "```\n"
    assert checked(text)["source"] == good_code()


def edited(old, new):
    code = good_code()
    assert old in code
    return checked("```python\n" + code.replace(old, new, 1) + "```")


@pytest.mark.parametrize("old, new, reason", [
    ("import torch\n", "import subprocess\nimport torch\n", "imports subprocess"),
    ("import torch\n", "from os import path\nimport torch\n", "imports from os"),
    ("import torch\n", "from . import helpers\nimport torch\n", "imports from ."),
    ("import torch\n", "import socket\nimport torch\n", "imports socket"),
    ("import torch\n", "import ctypes\nimport torch\n", "imports ctypes"),
    ("    return out\n", "    eval('1')\n    return out\n", "uses eval"),
    ("    return out\n", "    exec('x = 1')\n    return out\n", "uses exec"),
    ("    return out\n", "    open('/tmp/x', 'w')\n    return out\n", "uses open"),
    ("    return out\n", "    __import__('os')\n    return out\n", "uses __import__"),
    ("    return out\n", "    getattr(x, 'sum')(1)\n    return out\n", "uses getattr"),
    ("    return out\n", "    print.__self__\n    return out\n", "reaches __self__"),
    ("    return out\n", "    __builtins__['open']\n    return out\n", "reaches __builtins__"),
    ("    return out\n", "    x.__class__\n    return out\n", "reaches __class__"),
    ("    return out\n", "    return torch.matmul(x, x)\n", "calls torch.matmul"),
    ("    return out\n", "    return torch.nn.functional.softmax(x, 0)\n", "calls torch.nn"),
    ("    return out\n", "    return torch.hub.load('a', 'b')\n", "calls torch.hub"),
    ("    return out\n", "    return x @ x\n", "with @"),
    ("    return out\n", "    return x.softmax(0)\n", "calls .softmax()"),
    ("def row_sum(", "def row_sum2(", "row_sum is not defined"),
    ("out_ptr, n_cols", "out_ptr, cols", "parameters changed"),
    ("BLOCK: tl.constexpr", "BLOCK", "BLOCK must stay tl.constexpr"),
    ("def rowsum(x)", "def rowsum(x, y)", "rowsum's parameters changed"),
    ("def rowsum(x)", "def rowsum2(x)", "rowsum of the file is gone"),
    ("@triton.jit\n", "", "no longer a @triton.jit"),
    ("    return out\n", "    return out\n\n\nrow_sum = rowsum\n", "bound again"),
    ("    row = tl.program_id(0)\n", "    row = tl.program_id(0\n", "does not parse: line"),
])
def test_hostile_or_broken_rewrites_are_refused_with_the_reason(old, new, reason):
    got = edited(old, new)
    assert got["status"] == "refused" and got["source"] is None
    assert reason in got["reason"], got["reason"]


def test_torch_may_allocate_and_describe():
    got = edited("    return out\n",
                 "    tmp = torch.zeros(x.shape[0], dtype=torch.float32, device=x.device)\n"
                 "    del tmp\n    return out\n")
    assert got["status"] == "ok", got["reason"]


def test_an_empty_answer_is_refused():
    assert "empty" in checked("")["reason"]
    assert "empty" in check_answer(None, "row_sum", SOURCE)["reason"]


TASK = os.path.join(LLM, "task.json")
SHAPE = {"M": 8, "N": 40}


# A kernel that calls what triton.language lacks fails to compile on the GPU; the interpreter
# meets it as it runs.
@pytest.mark.parametrize("name, statuses", [("good", ("ok",)), ("wrong", ("wrong",)),
                                            ("no_compile", ("compile", "runtime"))])
def test_an_accepted_answer_is_checked_like_any_variant(name, statuses):
    source = checked(ANSWERS[name]["text"])["source"]
    got = run_check(load_task(TASK), {"BLOCK": 16}, SHAPE, seed=3, variant=source)
    assert got["status"] in statuses, got["message"]
    if statuses == ("wrong",):
        assert got["max_abs_err"]["out"] > 0


CACHING_TASK = {
    "source": os.path.join(LLM, "caching.py"),
    "kernel": "row_sum",
    "inputs": [{"name": "x", "shape": ["M", "N"], "dtype": "float32", "init": "randn"}],
    "outputs": [{"name": "out", "atol": 1e-3, "rtol": 1e-3}],
    "launch": {"call": "caching:rowsum", "args": ["x"], "returns": ["out"]},
    "reference": "caching:reference",
    "shapes": {"tune": [{"M": 64, "N": 48}], "check": [{"M": 8, "N": 40}, {"M": 4, "N": 20}]},
}


def test_a_cached_output_passes_one_order_per_shape_and_fails_both_orders(tmp_path):
    path = tmp_path / "caching.json"
    path.write_text(json.dumps(CACHING_TASK))
    task = load_task(str(path))
    # fresh inputs at each check shape: the first run at a shape computes, so it passes
    for seed, shape in enumerate(CACHING_TASK["shapes"]["check"], 1):
        got = run_check(task, {}, shape, seed=seed)
        assert got["status"] == "ok", got["message"]
    # a proposal's check runs again with other fresh inputs, the candidate first
    shape = CACHING_TASK["shapes"]["tune"][0]
    got = run_check(task, {}, shape, seed=9, both_orders=True)
    assert got["status"] == "wrong", got["message"]
    assert "run before the reference" in got["message"]


def test_an_honest_proposal_passes_both_orders():
    source = checked(ANSWERS["good"]["text"])["source"]
    got = run_check(load_task(TASK), {"BLOCK": 16}, SHAPE, seed=4, variant=source,
                    both_orders=True)
    assert got["status"] == "ok", got["message"]
