"""A variant crosses to a worker once: the engine sends its text with its digest, then the digest
alone; the worker keeps the text and its loaded kernel under that digest, and a digest it was
never sent is a failed candidate, not a crash."""

import os

from tforge_worker import load_task, run_check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADD = os.path.join(ROOT, "experiments", "kernels", "vector_add")
LINE = "tl.store(out_ptr + offs, x + y, mask=mask)"


def _edits():
    with open(os.path.join(ADD, "kernel.py")) as f:
        text = f.read()
    return (text.replace(LINE, "tl.store(out_ptr + offs, y + x, mask=mask)"),
            text.replace(LINE, "tl.store(out_ptr + offs, x - y, mask=mask)"))


def test_a_variant_is_sent_once_then_named_by_its_digest():
    task = load_task(os.path.join(ADD, "task.json"))
    shape, config = task["shapes"]["check"][0], task["baseline"][0]
    same, wrong = _edits()
    first = run_check(task, config, shape, variant=wrong, digest="fnv1a64:0000000000000001")
    assert first["status"] == "wrong", first
    # the digest alone runs the text it was sent with, not the file nor another variant
    again = run_check(task, config, shape, digest="fnv1a64:0000000000000001")
    assert again["status"] == "wrong", again
    assert run_check(task, config, shape, variant=same,
                     digest="fnv1a64:0000000000000002")["status"] == "ok"
    assert run_check(task, config, shape, digest="fnv1a64:0000000000000002")["status"] == "ok"


def test_a_digest_never_sent_is_a_failed_candidate():
    task = load_task(os.path.join(ADD, "task.json"))
    r = run_check(task, task["baseline"][0], task["shapes"]["check"][0],
                  digest="fnv1a64:00000000000000ff")
    assert r["status"] == "compile" and "never sent" in r["message"], r
