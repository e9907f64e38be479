"""A stand-in GPU for machines without one: the interpreter and compile backends.

Kernel files ask the GPU about itself as they are imported (`DEVICE =
triton.runtime.driver.active.get_active_torch_device()`, the SM count for a persistent grid,
`torch.cuda.get_device_capability()` to pick a code path). With the CPU build of torch these
raise, and under TRITON_INTERPRET Triton has no active driver at all. While `active()` is
entered, and only when no CUDA device is present, those queries answer as the GPU our recorded
spaces come from (an NVIDIA H200, sm_90), except that the device the driver names is the CPU:
tensors a file makes "on the GPU" are then tensors the interpreter can run on.

`torch.cuda.is_available()` keeps answering False, so code it guards takes its CPU branch,
which is the one that works here.
"""

import contextlib
import types

import torch
import triton

NAME = "NVIDIA H200"
CAPABILITY = (9, 0)
SM_COUNT = 132
SHARED_PER_BLOCK_OPTIN = 232448  # the most shared memory a block may opt in to
REGISTERS_PER_SM = 65536
WARP_SIZE = 32
TOTAL_MEMORY = 143771 * 2**20  # what the driver reports for the 141 GB part
SM_CLOCK_KHZ = 1980000
MEMORY_CLOCK_KHZ = 3201000
MEMORY_BUS_BITS = 6144

# torch.cuda.get_device_properties(): the fields real files read.
_TORCH_PROPERTIES = types.SimpleNamespace(
    name=NAME, major=CAPABILITY[0], minor=CAPABILITY[1], multi_processor_count=SM_COUNT,
    total_memory=TOTAL_MEMORY, warp_size=WARP_SIZE, regs_per_multiprocessor=REGISTERS_PER_SM,
    shared_memory_per_block=49152, shared_memory_per_block_optin=SHARED_PER_BLOCK_OPTIN,
    shared_memory_per_multiprocessor=233472, max_threads_per_multi_processor=2048,
    L2_cache_size=50 * 2**20, clock_rate=SM_CLOCK_KHZ, memory_clock_rate=MEMORY_CLOCK_KHZ,
    memory_bus_width=MEMORY_BUS_BITS, is_integrated=0, is_multi_gpu_board=0)

# triton.runtime.driver.active.utils.get_device_properties(): the keys of Triton's CUDA driver.
_TRITON_PROPERTIES = {"max_shared_mem": SHARED_PER_BLOCK_OPTIN, "max_num_regs": REGISTERS_PER_SM,
                      "multiprocessor_count": SM_COUNT, "warpSize": WARP_SIZE,
                      "sm_clock_rate": SM_CLOCK_KHZ, "mem_clock_rate": MEMORY_CLOCK_KHZ,
                      "mem_bus_width": MEMORY_BUS_BITS}


class _Driver:
    """What files call on `triton.runtime.driver.active`."""

    def __init__(self):
        self.utils = types.SimpleNamespace(get_device_properties=lambda device=None:
                                           dict(_TRITON_PROPERTIES))

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget("cuda", CAPABILITY[0] * 10 + CAPABILITY[1], WARP_SIZE)

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_current_device(self):
        return 0

    def get_device_capability(self, device=None):
        return CAPABILITY


_TORCH_CUDA = {
    "get_device_properties": lambda device=None: _TORCH_PROPERTIES,
    "get_device_capability": lambda device=None: CAPABILITY,
    "get_device_name": lambda device=None: NAME,
    "current_device": lambda: 0,
}
_installed = False  # active() nests: a task's ref.py may be loaded inside another load


@contextlib.contextmanager
def active():
    """Within it, without a CUDA device, GPU queries answer as above; everything is put back on
    exit. With a CUDA device it changes nothing."""
    global _installed
    if _installed or torch.cuda.is_available():
        yield
        return
    config = triton.runtime.driver
    saved_driver = config._active  # None until something asks; asking raises without a GPU
    saved_cuda = {k: getattr(torch.cuda, k) for k in _TORCH_CUDA}
    config.set_active(_Driver())
    for k, fn in _TORCH_CUDA.items():
        setattr(torch.cuda, k, fn)
    _installed = True
    try:
        yield
    finally:
        _installed = False
        config._active = saved_driver
        for k, fn in saved_cuda.items():
            setattr(torch.cuda, k, fn)
