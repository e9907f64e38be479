"""Energy around a batch of launches, from NVML's total-energy counter, and the observer hook that
other sensors plug into.

NVML is opened here and nowhere else, with ctypes (a dlopen of libnvidia-ml.so.1, or of the
library TFORGE_NVML_LIBRARY names: a fake, in tests). Why ctypes in the worker's Python rather
than a C observer behind the worker's C extension: the timed launches are queued by Python
(bench.py), so the counter is read next to them with no crossing into the engine, the engine
stays free of NVML, and a machine without the library simply has no energy.

An observer has begin() and end(launches, seconds) -> {metric: value}, or raises Unmeasured(why)
when its window was too short for what it reads; observe() runs a batch of back-to-back launches
between them, long enough for every observer (each says how long with min_window_s()), doubling
the window while one says it was too short, up to MAX_WINDOW_S. The batch flushes no cache and restores
no input between launches: a 256 MB flush's own energy would swamp a kernel's, so the joules are
those of the kernel run back to back, as a program runs it (warm L2), and gaps the launches' CPU
time leaves on the GPU are charged to them.
"""

import ctypes
import math
import os
import statistics
import time as _time

NVML_SUCCESS = 0
NVML_CLOCK_SM = 1
MIN_WINDOW_S = 0.2   # no batch shorter
TICKS = 20           # counter updates a window spans at least: a tick at either end is <= 10%
MAX_WINDOW_S = 4.0   # a kernel whose counter has not moved by then is too short to measure
PERIOD_PROBE_S = 1.0  # how long the counter's update period is looked for
PERIOD_CHANGES = 6    # changes of the counter it is found from


class Unmeasured(Exception):
    """What an observer could not measure over its window, and why."""


class Nvml:
    """The NVML library, initialised: total energy (mJ) and the SM clock of a device."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        rc = self.lib.nvmlInit_v2()
        if rc != NVML_SUCCESS:
            raise OSError(f"{path}: nvmlInit_v2 returned {rc}")

    def _check(self, rc, what):
        if rc != NVML_SUCCESS:
            raise OSError(f"NVML {what} returned {rc}")

    def handle(self, uuid=None):
        """The device with this UUID (as torch gives it), else the first."""
        h = ctypes.c_void_p()
        if uuid:
            self._check(self.lib.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}".encode(),
                                                           ctypes.byref(h)), "GetHandleByUUID")
        else:
            self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)),
                        "GetHandleByIndex_v2")
        return h

    def energy_mj(self, h):
        e = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e)),
                    "GetTotalEnergyConsumption")
        return e.value

    def sm_clock_mhz(self, h):
        c = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM, ctypes.byref(c)),
                    "GetClockInfo")
        return c.value


class EnergyObserver:
    """Joules per launch and mean power from the counter read at both ends of the batch, and the
    SM clock seen at its end. The counter moves in steps (the driver's update period, found at
    start), so a window spans TICKS of them."""

    def __init__(self, nvml, handle, clock=_time.perf_counter, sleep=_time.sleep):
        self.nvml, self.handle, self.clock = nvml, handle, clock
        self.period_s = self._update_period(sleep)
        self.start = None

    def _update_period(self, sleep):
        """The counter's update period: the median time between its changes, polled every
        millisecond (a poll that comes late sees two updates as one: the median is robust to a
        few); None when it changed fewer than PERIOD_CHANGES times within PERIOD_PROBE_S."""
        changes, last, t0 = [], self.nvml.energy_mj(self.handle), self.clock()
        while len(changes) < PERIOD_CHANGES and self.clock() - t0 < PERIOD_PROBE_S:
            sleep(1e-3)
            e = self.nvml.energy_mj(self.handle)
            if e != last:
                changes.append(self.clock())
                last = e
        if len(changes) < PERIOD_CHANGES:
            return None
        return statistics.median(b - a for a, b in zip(changes, changes[1:]))

    def min_window_s(self):
        return max(MIN_WINDOW_S, TICKS * self.period_s) if self.period_s else MIN_WINDOW_S

    def begin(self):
        self.start = self.nvml.energy_mj(self.handle)

    def end(self, launches, seconds):
        used_mj = self.nvml.energy_mj(self.handle) - self.start
        if used_mj <= 0:
            raise Unmeasured("NVML's energy counter did not move")
        joules = used_mj / 1e3
        return {"energy_j": joules / launches, "power_w": joules / seconds,
                "sm_clock_mhz": self.nvml.sm_clock_mhz(self.handle)}


_extra = []   # observers plugged in by add_observer
_state = {}   # the NVML observer once made, or why there is none


def add_observer(observer):
    """Plugs in another sensor: observe() begins and ends it around every batch."""
    _extra.append(observer)


def _nvml_observer(uuid):
    """The energy observer of this process (made once), or None with the reason kept."""
    if "observer" not in _state:
        path = os.environ.get("TFORGE_NVML_LIBRARY", "libnvidia-ml.so.1")
        try:
            nvml = Nvml(path)
            _state["observer"] = EnergyObserver(nvml, nvml.handle(uuid))
            _state["why"] = None
        except (OSError, AttributeError) as e:  # no library, no symbol, no device
            _state["observer"], _state["why"] = None, f"NVML unavailable: {e}"
    return _state["observer"]


def observe(run, synchronize, estimate_ms, uuid=None, clock=_time.perf_counter):
    """Runs `run` back to back between every observer's begin and end, long enough for each,
    and returns ({metric: value}, note): the metrics with the batch's launches and seconds
    (batch_launches, batch_s), or none and the note saying why. The batch stops at its window
    by the clock, or at as many launches as the window holds by `estimate_ms`, whichever comes
    first: a kernel shorter than its launch's CPU time is not queued for hours, and a long one
    does not fill the queue far past the window."""
    observers = [o for o in [_nvml_observer(uuid)] + _extra if o is not None]
    if not observers:
        return {}, _state["why"]
    window = max(o.min_window_s() for o in observers)
    per_launch_ms = max(estimate_ms, 1e-4)
    while True:
        most = max(1, math.ceil(window * 1e3 / per_launch_ms))
        synchronize()
        for o in observers:
            o.begin()
        t0, n = clock(), 0
        while n < most and (n == 0 or clock() - t0 < window):
            run()
            n += 1
        synchronize()
        seconds = clock() - t0
        if n == most and seconds < 0.9 * window:  # back to back (a warm cache) it runs faster
            per_launch_ms = max(seconds * 1e3 / n, 1e-4)
            continue
        try:
            metrics = {}
            for o in observers:
                metrics.update(o.end(n, seconds))
            return {**metrics, "batch_launches": n, "batch_s": seconds}, None
        except Unmeasured as e:
            if window * 2 > MAX_WINDOW_S:
                return {}, (f"{e} over {seconds * 1e3:.0f} ms ({n} launches): the kernel is "
                            "too short to measure")
            window *= 2
