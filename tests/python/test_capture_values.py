"""Capture of what random inputs and a before-and-after comparison miss: integer tensors whose
values index or bound others (tables, lengths), outputs written in part, and outputs whose
values the recorded launch did not change."""

import json
import os
import sys

import torch

from conftest import FIXTURES
from tforge_worker import capture, load_task, run_check
from tforge_worker import worker

REALISTIC = os.path.join(FIXTURES, "realistic")


def _tasks(name, tmp_path, **kw):
    got = capture.init(os.path.join(REALISTIC, name), str(tmp_path), **kw)
    assert got["error"] is None
    return {t["kernel"]: t for t in got["tasks"]}


def _inputs(task):
    return {i["name"]: i for i in json.load(open(task["task"]))["inputs"]}


def test_tables_and_lengths_keep_their_values(tmp_path):
    # a request-to-token table into a token pool sized for many more requests, and lengths the
    # kernel loops to: random ones read past the pool and the table's rows at a smaller shape
    tasks = _tasks("decode_attention_stages.py", tmp_path)
    for kernel in ("_fwd_kernel_stage1", "_fwd_kernel_stage2"):
        t = tasks[kernel]
        assert t["check"] == "ok", (kernel, t.get("check_message"))
        inputs = _inputs(t)
        assert inputs["b_seq_len"]["init"] == "values"
        assert inputs["b_seq_len"]["values"] == [5, 300, 77]
        # the sizes the values depend on stay
        assert t["check_shape"] == t["shape"]
    table = _inputs(tasks["_fwd_kernel_stage1"])["req_to_token"]
    assert table["init"] == "values" and table["shape"] == [6, 1024]
    assert max(table["values"]) == 382 and len(table["values"]) == 6 * 1024
    # thousands of numbers on one line of the task file, not one line each
    assert sum(1 for _ in open(tasks["_fwd_kernel_stage1"]["task"])) < 400


def test_an_index_tied_to_a_size_is_still_drawn(tmp_path):
    # labels index the class dimension (a symbol): drawn below it, the check shape smaller
    tasks = _tasks("fused_xent.py", tmp_path)
    (t,) = tasks.values()
    doc = json.load(open(t["task"]))
    assert [i["init"] for i in doc["inputs"] if i["name"] == "target"] == ["randint:0:n_cols"]
    assert t["check_shape"] != t["shape"]


def test_an_output_written_in_part_is_compared_where_the_reference_wrote(tmp_path):
    # a padded batch from torch.empty: rows past each length are never written
    (t,) = _tasks("varlen_pad.py", tmp_path).values()
    assert t["check"] == "ok", t.get("check_message")
    compared, total = t["check_compared"]["out0"]
    assert 0 < compared < total
    assert compared == sum([37, 5, 90, 64]) * 96
    assert f"compared the {compared} of {total} elements" in t["check_message"]


def test_split_kv_partials_are_compared_where_written(tmp_path):
    # stage 1 writes no partial for the splits past a short sequence's end (5 tokens, 8 splits)
    t = _tasks("decode_attention_stages.py", tmp_path, kernel="_fwd_kernel_stage1")[
        "_fwd_kernel_stage1"]
    assert t["check"] == "ok", t.get("check_message")
    compared, total = t["check_compared"]["attn_logits"]
    assert compared == total - 3 * 4 * 33  # batch 0: 3 splits of 4 heads, 32 values + lse


def test_an_output_the_reference_wrote_nothing_of_is_wrong(tmp_path):
    (t,) = _tasks("varlen_pad.py", tmp_path).values()
    doc = json.load(open(t["task"]))
    for i in doc["inputs"]:
        if i["name"] == "cu_seqlens":
            i["values"] = [0] * len(i["values"])  # every sequence empty: nothing is written
    path = tmp_path / "empty" / "task.json"
    path.parent.mkdir()
    doc["source"] = os.path.join(REALISTIC, "varlen_pad.py")
    path.write_text(json.dumps(doc))
    task = load_task(str(path))
    got = run_check(task, task["baseline"][0], task["shapes"]["check"][0])
    assert got["status"] == "wrong" and "wrote none of its" in got["message"]


def test_compare_leaves_out_what_was_not_written():
    compare, poisoned_elements = worker.compare, worker.poisoned_elements
    expected = torch.tensor([1.0, 2.0, 3.0, 4.0])
    worker._poison(expected[2:])
    written = ~poisoned_elements(expected)
    assert written.tolist() == [True, True, False, False]
    got = compare(torch.tensor([1.0, 2.0, 9.0, float("nan")]), expected, 0, 0, written)
    assert got["bad"] == 0 and got["compared"] == 2
    # the candidate must still match where the reference wrote (its poison never passes)
    got = compare(torch.tensor([1.0, float("nan"), 3.0, 4.0]), expected, 0, 0, written)
    assert got["bad"] == 1
    # a NaN the kernel computes is not the poison
    assert not bool(poisoned_elements(torch.tensor([float("nan")]).half()).any())


def test_outputs_an_autotuners_benchmark_wrote_first_are_found(tmp_path):
    # the benchmark runs of the configs wrote y and dx before the recorded launch: unchanged
    # by it, they are found from the stores of the kernel (and a poisoned replay)
    tasks = _tasks("gelu_loss_autotune.py", tmp_path, kernel="gelu_fwd_grad_kernel")
    t = tasks["gelu_fwd_grad_kernel"]
    assert t["launches"] > 1  # the benchmark's and the chosen one
    assert t["check"] == "ok", t.get("check_message")
    doc = json.load(open(t["task"]))
    assert doc["outputs"] == [{"name": "Y_ptr", "atol": 1e-4, "rtol": 1e-4},
                              {"name": "DX_ptr", "atol": 1e-4, "rtol": 1e-4}]


def test_an_in_place_update_to_the_same_values_is_an_output(tmp_path):
    # the backward scales the saved gradient by grad_output = 1.0, in place
    tasks = _tasks("gelu_loss_autotune.py", tmp_path, kernel="element_mul_kernel")
    t = tasks["element_mul_kernel"]
    assert t["check"] == "ok", t.get("check_message")
    doc = json.load(open(t["task"]))
    assert doc["outputs"] == [{"name": "x", "atol": 1e-4, "rtol": 1e-4, "poison": False}]
    assert doc["writes_inputs"] is True


def test_a_store_the_launch_does_not_reach_is_no_output(tmp_path):
    # a flag turns the statistics' store off: the kernel's code stores to rstd, this launch
    # does not (its values stay), and the replay on a poisoned copy says so
    script = tmp_path / "norm.py"
    script.write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def scale_kernel(x_ptr, y_ptr, rstd_ptr, n, STORE_RSTD: tl.constexpr,\n"
        "                 BLOCK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        "    cols = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)\n"
        "    r = 1 / tl.sqrt(tl.sum(x * x) / n + 1e-6)\n"
        "    if STORE_RSTD:\n"
        "        tl.store(rstd_ptr + row, r)\n"
        "    tl.store(y_ptr + row * n + cols, x * r, mask=cols < n)\n"
        "x = torch.randn(5, 40); y = torch.empty_like(x); rstd = torch.zeros(5)\n"
        "for _ in range(2):  # the same output twice: the second launch changes nothing\n"
        "    scale_kernel[(5,)](x, y, rstd, 40, STORE_RSTD=False, BLOCK=64)\n"
        "torch.testing.assert_close(y, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))\n")
    got = capture.capture([sys.executable, str(script)], "tasks", cwd=str(tmp_path))
    (t,) = got["tasks"]
    assert t["check"] == "ok", t.get("check_message")
    doc = json.load(open(t["task"]))
    assert [o["name"] for o in doc["outputs"]] == ["y_ptr"]


def test_a_table_too_large_to_keep_is_drawn_at_the_tune_shape(tmp_path, monkeypatch):
    # past the integers a task keeps, the table is drawn in its recorded range: valid only
    # at the sizes it was recorded with, so the check keeps them
    monkeypatch.setattr(capture, "_KEPT_VALUES", 4096)  # the table holds 6 x 1024
    t = _tasks("decode_attention_stages.py", tmp_path, kernel="_fwd_kernel_stage1")[
        "_fwd_kernel_stage1"]
    inputs = _inputs(t)
    assert inputs["req_to_token"]["init"] == "randint:0:383"
    assert inputs["b_seq_len"]["init"] == "values"
    assert any(n.startswith("req_to_token: drawn at random") for n in t["notes"]), t["notes"]
    assert t["check_shape"] == t["shape"] and t["check"] == "ok", t.get("check_message")
