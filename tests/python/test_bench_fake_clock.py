"""The timing protocol of tforge_worker.bench on a fake CUDA device with a simulated clock.

FakeCuda keeps one stream in exact arithmetic (microseconds, as Fractions): work queued at host
time t starts when the stream is free; an event completes when the stream reaches it; a kernel
reaches the stream only once its launch's CPU time has passed on the host. So, on an idle GPU,
a start event fires before the kernel is even queued, and the launch's CPU time is measured as
kernel time: the failure bench.py must guard against with enough flushes, or without a flush a
queued GPU sleep."""

import random
import statistics
import types
from fractions import Fraction

import numpy as np
import pytest
import torch
from triton.runtime.errors import OutOfResources

import tforge_worker.bench as bench

LAUNCH_US = 25   # CPU time of one launch call
OP_US = 1        # CPU time of queuing anything else (an event, the flush, a sleep)
CLOCK_MHZ = 1980  # the fake GPU's clock: _sleep(cycles) lasts cycles / CLOCK_MHZ us
ESTIMATE_RUNS = 5  # bench.time's estimation launches (after the one that compiles)


class FakeCuda:
    def __init__(self, kernel_us, flush_us=60, writes_inputs=False, fail_at=None, exc=None):
        self.kernel_us = kernel_us  # launch index -> duration in us
        self.flush_us = flush_us
        self.fail_at, self.exc = fail_at, exc
        self.host = Fraction(0)     # the CPU's clock
        self.stream = Fraction(0)   # when the GPU finishes what is queued
        self.durations = []         # every launch's simulated kernel time, in order
        self.flushes = self.dirty = 0
        self.loaded = types.SimpleNamespace(cache={}, spec={"writes_inputs": writes_inputs})
        fake = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing
                self.at = None

            def record(self):
                fake.host += OP_US
                self.at = max(fake.host, fake.stream)

            def elapsed_time(self, end):
                if self.at is None or end.at is None or end.at > fake.host:
                    raise RuntimeError("event not recorded or not completed")
                return float(end.at - self.at) / 1000

        self.Event = Event

    def install(self, mp):
        for name in ("is_available", "synchronize", "_sleep", "clock_rate", "get_device_name",
                     "Event"):
            mp.setattr(torch.cuda, name, getattr(self, name))
        mp.setattr(bench, "_time", types.SimpleNamespace(perf_counter=lambda: self.host / 10**6))
        mp.setattr(bench, "get", lambda task: self.loaded)
        mp.setattr(bench, "make_inputs", lambda loaded, shape, seed: {"x": torch.zeros(8), "N": 8})
        mp.setattr(bench, "bind", lambda loaded, inputs, config, shape:
                   lambda: self.launch(loaded, inputs, config, shape))
        mp.setattr(bench, "_flusher", lambda: self.flush)
        return self

    def _queue(self, us):
        self.host += OP_US
        self.stream = max(self.host, self.stream) + us

    def is_available(self):
        return True

    def synchronize(self):
        self.host = max(self.host, self.stream)

    def _sleep(self, cycles):
        self._queue(Fraction(cycles, CLOCK_MHZ))

    def clock_rate(self):
        return CLOCK_MHZ

    def get_device_name(self):
        return "Fake H200"

    def flush(self):
        self.flushes += 1
        self._queue(self.flush_us)

    def launch(self, loaded, inputs, config, shape):
        if len(self.durations) == self.fail_at:
            raise self.exc
        # The kernel writes its input: it must find it as made (zeros) every time.
        self.dirty += bool(inputs["x"].any())
        inputs["x"].add_(1)
        d = Fraction(self.kernel_us(len(self.durations)))
        self.durations.append(d)
        self.host += LAUNCH_US
        self.stream = max(self.host, self.stream) + d


def timed(mp, fake, **kw):
    fake.install(mp)
    return bench.time({"id": "fake"}, {"BLOCK": 64}, {"N": 8}, samples=True, **kw)


def counts(d_ms, warmup_ms, rep_ms, min_repeats, max_repeats):
    """The documented rule: warm-up and repeat counts are the budgets over the kernel's time,
    at least 1 (warm-up) or min_repeats (repeats), at most max_repeats."""
    return (max(1, min(max_repeats, int(warmup_ms / d_ms))),
            max(min_repeats, min(max_repeats, int(rep_ms / d_ms))))


def test_the_fake_times_the_launch_on_an_idle_gpu(monkeypatch):
    # The model itself: nothing queued before the start event, so the launch's CPU time counts.
    fake = FakeCuda(lambda i: 2).install(monkeypatch)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fake.launch(fake.loaded, {"x": torch.zeros(1)}, {}, {})
    e.record()
    with pytest.raises(RuntimeError):
        s.elapsed_time(e)  # not completed yet
    torch.cuda.synchronize()
    assert s.elapsed_time(e) == pytest.approx((LAUNCH_US + 2) / 1000)


# flush_us None: no flush (a sleep must cover the launch); 10: a flush shorter than the launch
# (repeated until it covers it); 60: about an H200's 256 MB flush, which covers the launch alone.
@pytest.mark.parametrize("flush_us", [None, 10, 60])
@pytest.mark.parametrize("kernel_us", [2, 50, 5000])
def test_median_is_the_kernel_time_and_counts_follow_the_rule(monkeypatch, kernel_us, flush_us):
    fake = FakeCuda(lambda i: kernel_us, flush_us=flush_us or 0)
    r = timed(monkeypatch, fake, flush_l2=flush_us is not None)
    assert r["status"] == "ok", r
    d_ms = kernel_us / 1000
    assert r["median_ms"] == pytest.approx(d_ms, rel=1e-9)
    assert r["min_ms"] == pytest.approx(d_ms, rel=1e-9)
    assert r["max_ms"] == pytest.approx(d_ms, rel=1e-9)
    assert r["spread"] == pytest.approx(0, abs=1e-9)
    assert (r["warmup"], r["n"]) == counts(d_ms, 25.0, 100.0, 10, 1000)
    assert len(fake.durations) == 1 + ESTIMATE_RUNS + r["warmup"] + r["n"]
    assert len(r["samples_ms"]) == r["n"]
    assert r["launch_overhead_us"] == pytest.approx(LAUNCH_US)
    if flush_us is None:  # a sleep covers the launch
        assert fake.flushes == 0 and r["flushes"] == 0 and r["sleep_cycles"] > 0
    else:  # as few flushes as cover twice the launch's CPU time, and no sleep (no idle GPU)
        assert fake.flushes == ESTIMATE_RUNS + r["warmup"] + r["n"] * r["flushes"]
        assert r["flushes"] * flush_us >= 2 * LAUNCH_US > (r["flushes"] - 1) * flush_us
        assert r["sleep_cycles"] == 0
    assert r["device"] == "Fake H200"
    assert r["sm_clock_mhz_before"] == r["sm_clock_mhz_after"] == CLOCK_MHZ


@pytest.mark.parametrize("budgets", [
    dict(warmup_ms=25.0, rep_ms=100.0, min_repeats=10, max_repeats=1000),
    dict(warmup_ms=1.0, rep_ms=3.0, min_repeats=10, max_repeats=1000),
    dict(warmup_ms=0.01, rep_ms=0.01, min_repeats=3, max_repeats=50),
    dict(warmup_ms=100.0, rep_ms=1000.0, min_repeats=5, max_repeats=40),
])
@pytest.mark.parametrize("kernel_us", [2, 70, 3000])
@pytest.mark.parametrize("flush", [False, True])
def test_counts_follow_the_budgets(monkeypatch, budgets, kernel_us, flush):
    fake = FakeCuda(lambda i: kernel_us)
    r = timed(monkeypatch, fake, flush_l2=flush, **budgets)
    assert r["status"] == "ok", r
    assert (r["warmup"], r["n"]) == counts(kernel_us / 1000, **budgets)
    assert len(fake.durations) == 1 + ESTIMATE_RUNS + r["warmup"] + r["n"]


@pytest.mark.parametrize("flush", [False, True])
def test_every_sample_kept_statistics_and_outliers(monkeypatch, flush):
    rng = random.Random(7)
    base = 50.0

    def draw(i):  # 2% noise; one launch in ten is 20 times slower (a planted outlier)
        return base * (1 + 0.02 * rng.gauss(0, 1)) * (20 if rng.random() < 0.1 else 1)

    fake = FakeCuda(draw)
    r = timed(monkeypatch, fake, flush_l2=flush, warmup_ms=1.0, rep_ms=10.0, min_repeats=10,
              max_repeats=1000)
    assert r["status"] == "ok", r
    truth = [float(d) / 1000 for d in fake.durations[-r["n"]:]]
    assert r["samples_ms"] == pytest.approx(truth, rel=1e-9)  # all of them, in launch order
    xs = np.array(r["samples_ms"])
    q25, q75 = np.percentile(xs, 25), np.percentile(xs, 75)
    assert r["median_ms"] == pytest.approx(statistics.median(truth), rel=1e-9)
    assert r["mean_ms"] == pytest.approx(xs.mean(), rel=1e-9)
    assert (r["min_ms"], r["max_ms"]) == pytest.approx((xs.min(), xs.max()), rel=1e-9)
    assert (r["q25_ms"], r["q75_ms"]) == pytest.approx((q25, q75), rel=1e-9)
    assert r["iqr_ms"] == pytest.approx(q75 - q25, rel=1e-9)
    assert r["spread"] == pytest.approx((q75 - q25) / np.median(xs), rel=1e-9)
    # The outliers pull the mean far up, not the median.
    assert r["max_ms"] > 10 * base / 1000 and r["mean_ms"] > 1.5 * base / 1000
    assert r["median_ms"] == pytest.approx(base / 1000, rel=0.02)


@pytest.mark.parametrize("writes_inputs", [True, False])
def test_inputs_a_kernel_writes_are_restored_before_every_launch(monkeypatch, writes_inputs):
    fake = FakeCuda(lambda i: 50, writes_inputs=writes_inputs)
    r = timed(monkeypatch, fake)
    assert r["status"] == "ok", r
    launches = len(fake.durations)
    assert launches == 1 + ESTIMATE_RUNS + r["warmup"] + r["n"]
    # The compile launch finds fresh inputs; every later one must find them restored.
    assert fake.dirty == (0 if writes_inputs else launches - 1)


@pytest.mark.parametrize("fail_at", [0, 3, 20])  # compiling, estimating, timing
@pytest.mark.parametrize("exc, status, fatal", [
    (RuntimeError("CUDA error: an illegal memory access was encountered"), "runtime", True),
    (OutOfResources(300000, 232448, "shared memory"), "compile", False),
])
def test_a_launch_that_raises_is_classified_without_numbers(monkeypatch, fail_at, exc, status,
                                                            fatal):
    fake = FakeCuda(lambda i: 50, fail_at=fail_at, exc=exc)
    r = timed(monkeypatch, fake)
    assert r == bench.classify(exc)
    assert (r["status"], r["fatal"]) == (status, fatal)
    assert not any(k.endswith("_ms") for k in r)  # no number, no samples_ms


def test_without_cuda_the_status_is_unsupported(monkeypatch):
    fake = FakeCuda(lambda i: 50).install(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    r = bench.time({"id": "fake"}, {"BLOCK": 64}, {"N": 8})
    assert r["status"] == "unsupported" and "median_ms" not in r
    assert fake.durations == []
