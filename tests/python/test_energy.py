"""Energy per launch from NVML's counter (tforge_worker.energy), over a fake NVML (a tiny shared
library built here from tests/fixtures/nvml/fake_nvml.c, loaded by TFORGE_NVML_LIBRARY) whose
device draws a set power and whose counter moves in steps. The "kernel" is a sleep of a known
length, so the joules it must get are power x its time."""

import os
import shutil
import subprocess
import time

import pytest

import tforge_worker.energy as energy

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "..", "fixtures", "nvml", "fake_nvml.c")


@pytest.fixture
def fake_nvml(tmp_path, monkeypatch):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("a C compiler is needed to build the fake NVML")
    lib = tmp_path / "libfake-nvml.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", FAKE, "-o", str(lib), "-lm"], check=True)
    monkeypatch.setenv("TFORGE_NVML_LIBRARY", str(lib))
    monkeypatch.setattr(energy, "_state", {})
    monkeypatch.setattr(energy, "_extra", [])
    return lib


class Sleeper:
    """A kernel that lasts `ms`, and the time its launches took in all."""

    def __init__(self, ms):
        self.ms, self.spent, self.launches = ms, 0.0, 0

    def __call__(self):
        t0 = time.perf_counter()
        time.sleep(self.ms / 1e3)
        self.spent += time.perf_counter() - t0
        self.launches += 1


def test_joules_per_launch_agree_with_the_power_drawn(fake_nvml, monkeypatch):
    monkeypatch.setenv("FAKE_NVML_POWER_W", "250")
    monkeypatch.setenv("FAKE_NVML_PERIOD_MS", "5")
    monkeypatch.setenv("FAKE_NVML_SM_MHZ", "1755")
    kernel = Sleeper(2.0)
    seen, note = energy.observe(kernel, lambda: None, estimate_ms=2.0)
    assert note is None
    observer = energy._state["observer"]
    assert 0.003 < observer.period_s < 0.02  # the fake's 5 ms steps, found by polling
    assert kernel.spent >= observer.min_window_s() * 0.95  # the batch spanned its window
    assert seen["batch_launches"] == kernel.launches
    expected = 250 * kernel.spent / kernel.launches
    assert seen["energy_j"] == pytest.approx(expected, rel=0.1)
    assert seen["power_w"] == pytest.approx(250, rel=0.1)
    assert seen["sm_clock_mhz"] == 1755


def test_a_batch_the_counter_never_sees_is_too_short_to_measure(fake_nvml, monkeypatch):
    monkeypatch.setenv("FAKE_NVML_PERIOD_MS", "100000")  # the counter never moves
    monkeypatch.setattr(energy, "PERIOD_PROBE_S", 0.05)
    monkeypatch.setattr(energy, "MIN_WINDOW_S", 0.02)
    monkeypatch.setattr(energy, "MAX_WINDOW_S", 0.2)
    kernel = Sleeper(1.0)
    seen, note = energy.observe(kernel, lambda: None, estimate_ms=1.0)
    assert seen == {}
    assert "too short to measure" in note and "did not move" in note
    assert kernel.launches > 20 * 2  # the batch was extended (doubled) before giving up


def test_a_kernel_faster_than_its_estimate_gets_a_longer_batch(fake_nvml, monkeypatch):
    monkeypatch.setenv("FAKE_NVML_PERIOD_MS", "5")
    kernel = Sleeper(1.0)
    seen, note = energy.observe(kernel, lambda: None, estimate_ms=10.0)  # 10x too long
    assert note is None
    assert seen["batch_s"] >= 0.9 * energy._state["observer"].min_window_s()


def test_a_kernel_shorter_than_its_launch_stops_at_the_window_by_the_clock(fake_nvml,
                                                                          monkeypatch):
    monkeypatch.setenv("FAKE_NVML_PERIOD_MS", "5")
    kernel = Sleeper(1.0)  # 1 ms of "launch" for a kernel the GPU runs in 1 us
    seen, note = energy.observe(kernel, lambda: None, estimate_ms=0.001)
    assert note is None
    window = energy._state["observer"].min_window_s()
    assert seen["batch_launches"] < 2 * window * 1e3  # not the 200000 the estimate allows
    assert seen["batch_s"] == pytest.approx(window, rel=0.2)


def test_without_nvml_there_is_no_energy_and_the_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("TFORGE_NVML_LIBRARY", str(tmp_path / "missing-libnvidia-ml.so.1"))
    monkeypatch.setattr(energy, "_state", {})
    monkeypatch.setattr(energy, "_extra", [])
    kernel = Sleeper(0.1)
    seen, note = energy.observe(kernel, lambda: None, estimate_ms=0.1)
    assert seen == {} and note.startswith("NVML unavailable")
    assert kernel.launches == 0  # nothing run for nobody to observe


def test_other_sensors_plug_in_around_the_same_batch(monkeypatch, tmp_path):
    monkeypatch.setenv("TFORGE_NVML_LIBRARY", str(tmp_path / "missing-libnvidia-ml.so.1"))
    monkeypatch.setattr(energy, "_state", {})
    monkeypatch.setattr(energy, "_extra", [])

    class Counter:
        def min_window_s(self):
            return 0.01

        def begin(self):
            self.began = kernel.launches

        def end(self, launches, seconds):
            return {"launches_seen": kernel.launches - self.began, "told": launches}

    kernel = Sleeper(1.0)
    energy.add_observer(Counter())
    seen, note = energy.observe(kernel, lambda: None, estimate_ms=1.0)
    assert note is None
    assert seen["launches_seen"] == seen["told"] == seen["batch_launches"] == kernel.launches >= 1
