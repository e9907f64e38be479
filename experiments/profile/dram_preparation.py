"""Which DRAM bytes does a pass's preparation leave for the kernel to pay? Our profiler (the
cupti plugin, through plugin_probe.py's ctypes bindings) profiles one config of a task under
several preparations of each pass, and prints the DRAM bytes read and written that each sees
beside the task's compulsory traffic (issue 16: ours read above ncu's on writing kernels), with
the SM throughput, the SM clock and the instructions executed that the same passes saw.

    python experiments/profile/dram_preparation.py path/to/tforge-cupti.so TASK.json [--shape I]

Preparations: `restore+flush` (as the worker's profiling.py: written inputs restored from their
pristine copies, then one 256 MB read flush), `restore+flush x3`, `flush` (nothing restored),
`restore+flush+sleep` (1 ms of GPU sleep after the flush: write-backs still in flight then
land before the kernel).
"""
import argparse
import ctypes as C
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "engine", "worker", "python"))
import torch  # noqa: E402
import tforge_worker  # noqa: E402
from tforge_worker import bench  # noqa: E402
from tforge_worker.worker import bind, get  # noqa: E402
from plugin_probe import (ALLOC, ERROR, FREE, LOG, Args, Descriptor, Host, Interface,  # noqa: E402
                          Module, Profile)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plugin")
    ap.add_argument("task")
    ap.add_argument("--shape", type=int, default=0)
    args = ap.parse_args()
    task = tforge_worker.load_task(args.task)
    shape = task["shapes"]["tune"][args.shape]
    loaded = get(task)
    inputs, pristine = bench._inputs(loaded, shape, 0)
    run = bind(loaded, inputs, task["baseline"][0], shape)
    run()
    flush = bench._flusher()
    torch.cuda.synchronize()

    def restore():
        for k, v in pristine.items():
            inputs[k].copy_(v)

    preparations = {
        "restore+flush": lambda: (restore(), flush()),
        "restore+flush x3": lambda: (restore(), flush(), flush(), flush()),
        "flush": flush,
        "restore+flush+sleep": lambda: (restore(), flush(), torch.cuda._sleep(2_000_000)),
    }
    lib = C.CDLL(args.plugin)
    module = Module.in_dll(lib, "tforge_plugin_entry")
    api = C.cast(C.cast(module.get(0), C.POINTER(Descriptor)).contents.interface,
                 C.POINTER(Interface)).contents
    log = LOG(lambda h, level, m: print("log", m.decode()))
    error = ERROR(lambda h, code, m: (print("error", m.decode()), code)[1])
    host = Host((1, 2, 0), C.sizeof(Host), None, log, error, ALLOC(0), FREE(0))
    keys, values = (C.c_char_p * 1)(b"set"), (C.c_char_p * 1)(b"core")
    state = C.c_void_p()
    if api.create(C.byref(state), C.byref(Args(C.sizeof(Args), C.pointer(host), 0, 0, None, 1,
                                                  keys, values))):
        sys.exit("create failed")
    print(f"{args.task} shape {shape}: {len(pristine)} inputs restored before each pass")
    print("| preparation | DRAM read MB | DRAM written MB | kernel ms | sm_pct | issue_pct | "
          "SM GHz | instructions |")
    print("|---|---|---|---|---|---|---|---|")
    for name, prepare in preparations.items():
        for _ in range(2):
            for p in range(api.passes(state)):
                prepare()
                torch.cuda.synchronize()
                api.begin(state, p)
                run()
                torch.cuda.synchronize()
                api.end(state, p)
            prof = Profile(C.sizeof(Profile))
            api.collect(state, C.byref(prof))
            m = {prof.metrics[i].name.decode(): prof.metrics[i].value
                 for i in range(prof.n_metrics)}
            print(f"| {name} | {m.get('dram_read_bytes', 0) / 1e6:.2f} | "
                  f"{m.get('dram_write_bytes', 0) / 1e6:.2f} | {m.get('kernel_ms', 0):.4f} | "
                  f"{m.get('sm_pct', 0):.1f} | {m.get('issue_pct', 0):.1f} | "
                  f"{m.get('sm_clock_ghz', 0):.3f} | {m.get('instructions', 0):.4g} |",
                  flush=True)
    api.destroy(state)


if __name__ == "__main__":
    main()
