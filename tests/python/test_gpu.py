"""On a GPU (ctest label gpu): checks at tuning sizes, honest timing and energy, compile-only with
the device's limits. Skipped without CUDA or under TRITON_INTERPRET."""

import os

import pytest
import torch

from conftest import EXAMPLES
from tforge_worker import compile, load_task, run_check, time

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1",
    reason="needs a CUDA GPU and compiled (not interpreted) kernels")

NAMES = ["attention", "conv2d", "layer_norm", "matmul", "rms_norm", "rope", "softmax",
         "vector_add"]


def _task(name):
    return load_task(os.path.join(EXAMPLES, name, "task.json"))


@pytest.mark.parametrize("name", NAMES)
def test_baseline_passes_at_a_tuning_size(name):
    spec = _task(name)
    shapes = spec["shapes"]["check"] + spec["shapes"]["tune"][-1:]
    for shape in shapes:
        result = run_check(spec, spec["baseline"][0], shape, seed=5)
        assert result["status"] == "ok", (shape, result)


def test_time_reports_statistics_no_faster_than_memory_allows():
    spec = _task("vector_add")
    shape = {"N": 1 << 28}
    r = time(spec, {"BLOCK": 1024, "num_warps": 4}, shape, samples=True)
    assert r["status"] == "ok", r
    assert r["n"] == len(r["samples_ms"]) >= 10
    assert 0 < r["min_ms"] <= r["q25_ms"] <= r["median_ms"] <= r["q75_ms"] <= r["max_ms"]
    # 3 arrays of 2^28 fp32 must cross HBM (the L2 is flushed): at most ~4.8 TB/s on an H200.
    assert r["median_ms"] > 3 * 4 * shape["N"] / 5e12 * 1e3
    assert r["spread"] < 0.5


def test_time_measures_energy_with_nvml():
    """Joules per launch from NVML's counter over a batch the counter can see: a physical
    power, and a launch's share of the batch near its timed median (a streaming kernel gains
    nothing from the warm cache of back-to-back launches)."""
    spec = _task("vector_add")
    r = time(spec, {"BLOCK": 1024, "num_warps": 4}, {"N": 1 << 28})
    assert r["status"] == "ok", r
    assert "energy_note" not in r, r["energy_note"]
    assert 30 < r["power_w"] < 1200 and r["sm_clock_mhz"] > 0, r
    assert r["batch_launches"] >= 1 and r["batch_s"] >= 0.2
    per_launch_ms = r["batch_s"] / r["batch_launches"] * 1e3
    assert 0.7 * r["median_ms"] < per_launch_ms < 1.3 * r["median_ms"], (per_launch_ms, r)
    assert r["energy_j"] == pytest.approx(r["power_w"] * per_launch_ms / 1e3, rel=1e-9)


def test_time_restores_inputs_the_kernel_writes():
    spec = _task("rope")
    shape = spec["shapes"]["check"][0]
    r = time(spec, spec["baseline"][0], shape, warmup_ms=1, rep_ms=5, flush_l2=False)
    assert r["status"] == "ok", r
    assert run_check(spec, spec["baseline"][0], shape, seed=0)["status"] == "ok"


def test_compile_reports_the_device_numbers_and_limits():
    spec = _task("matmul")
    shape = spec["shapes"]["tune"][0]
    ok = compile(spec, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                        "num_warps": 8, "num_stages": 3}, shape)
    assert ok["status"] == "ok" and ok["registers"] > 0 and ok["shared_bytes"] > 0, ok
    big = compile(spec, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8,
                         "num_warps": 8, "num_stages": 5}, shape)
    assert big["status"] == "compile" and "shared memory" in big["message"]


@pytest.mark.parametrize("name", ["gemm_autotune.py", "rms_norm_liger.py", "softmax_inplace.py"])
def test_init_captures_on_the_gpu(name, tmp_path):
    """Capture under a real GPU: the autotuner's whole list runs, and the config it launched is
    the baseline; each task passes its check and times."""
    from conftest import FIXTURES
    from tforge_worker import capture
    got = capture.init(os.path.join(FIXTURES, "realistic", name), str(tmp_path))
    assert got["error"] is None and got["tasks"]
    for t in got["tasks"]:
        assert t["check"] == "ok", (t["task"], t.get("check_message"))
        spec = load_task(t["task"])
        r = time(spec, spec["baseline"][0], spec["shapes"]["tune"][0])
        assert r["status"] == "ok" and r["median_ms"] > 0, r


def test_inputs_fn_draws_on_the_gpu(tmp_path):
    (tmp_path / "made.py").write_text(
        "import torch\n"
        "def inputs(shape, gen):\n"
        "    assert gen.device.type == 'cuda' and torch.empty(0).device.type == 'cuda'\n"
        "    n = shape['N']\n"
        "    return {'x': torch.randn(n, generator=gen), 'y': torch.randn(n, generator=gen),\n"
        "            'out': torch.zeros(n)}\n")
    import json
    import shutil
    from conftest import ADD_TASK, FIXTURES
    shutil.copy(os.path.join(FIXTURES, "planted.py"), tmp_path / "planted.py")
    doc = dict(ADD_TASK)
    del doc["inputs"]
    doc["inputs_fn"] = "made:inputs"
    (tmp_path / "task.json").write_text(json.dumps(doc))
    spec = load_task(str(tmp_path / "task.json"))
    assert run_check(spec, {"BLOCK": 128, "num_warps": 4}, {"N": 4096})["status"] == "ok"
