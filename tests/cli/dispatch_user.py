"""The file `tforge dispatch` wrote, imported as a user imports it (a fresh pytest process that
knows nothing of tforge): its choice per shape, timed by the recordings the tunes replayed, is
within 5% of each shape's own tuned winner (the held-out shapes are the test), and its autotune
list and key decorate the task's own kernel for Triton's autotuner, in the interpreter.

usage: DISPATCH_FILE=out.py DISPATCH_RESULTS=dir DISPATCH_HELD_OUT=4,5 \
       [DISPATCH_CONFIGS_AT_LEAST=2] TRITON_INTERPRET=1 python -m pytest dispatch_user.py
(the autotune test is the softmax fixture's: -k choice for another task)"""
import gzip
import importlib.util
import json
import os
import sys
import time

import pytest
import torch
import triton

FILE = os.environ["DISPATCH_FILE"]
RESULTS = os.environ["DISPATCH_RESULTS"]
HELD_OUT = {int(i) for i in os.environ["DISPATCH_HELD_OUT"].split(",")}
# the least number of configs its choices use (the tree told the shapes apart)
CONFIGS_AT_LEAST = int(os.environ.get("DISPATCH_CONFIGS_AT_LEAST", "2"))


@pytest.fixture(scope="module")
def dispatch():
    spec = importlib.util.spec_from_file_location("dispatch_under_test", FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tuned_shapes():
    """Each tuned shape: its sizes, its own winner's time and the recording it replayed."""
    for entry in sorted(os.listdir(RESULTS)):
        path = os.path.join(RESULTS, entry, "result.json")
        if os.path.exists(path):
            yield json.load(open(path))


def recorded_ms(recording, config):
    doc = json.load(gzip.open(recording))
    key = ",".join(str(config[k]) for k in doc["tune_params_keys"])
    return doc["cache"][key]["time"]


def test_choice_per_shape_within_5_percent_of_its_own_winner(dispatch):
    held, chosen = 0, set()
    for r in tuned_shapes():
        sizes = r["shape"]["values"]
        config = dispatch.config(**sizes)
        assert dispatch.triton_config(**sizes).all_kwargs() == config
        assert dispatch.variant(**sizes) is None  # nothing rewrote the source
        chosen.add(json.dumps(config, sort_keys=True))
        ms = recorded_ms(r["recording"], config)
        held += r["shape"]["index"] in HELD_OUT
        assert ms <= 1.05 * r["best"]["ms"], (r["shape"], config, ms, r["best"])
    assert held == len(HELD_OUT)
    assert len(chosen) >= CONFIGS_AT_LEAST


def test_autotune_list_and_key_on_the_task_kernel(dispatch):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)) + "/../fixtures/dispatch")
    import kernel

    assert dispatch.KEY == ["n_cols"]  # N reaches the kernel as n_cols; M only as the grid
    assert len(dispatch.AUTOTUNE_CONFIGS) >= 2

    def bench(fn, quantiles):  # the interpreter has no GPU timer: each config run once
        start = time.perf_counter()
        fn()
        return [(time.perf_counter() - start) * 1e3] * len(quantiles)

    tuned = triton.autotune(configs=dispatch.AUTOTUNE_CONFIGS, key=dispatch.KEY,
                            do_bench=bench)(kernel.softmax_kernel)
    x = torch.randn(3, 300) * 4
    y = torch.empty_like(x)
    tuned[(x.shape[0],)](y, x, x.stride(0), y.stride(0), x.shape[1])
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-6, rtol=1e-5)
    assert tuned.best_config in dispatch.AUTOTUNE_CONFIGS
