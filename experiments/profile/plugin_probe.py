"""Drives a profiler plugin ("tforge.profiler/2") from Python through ctypes, outside the engine,
around a torch kernel: each call printed before it is made, so that a crash names the call.

    python -X faulthandler experiments/profile/plugin_probe.py path/to/tforge-cupti.so [K=V...]
"""
import ctypes as C
import sys

import torch

LOG = C.CFUNCTYPE(None, C.c_void_p, C.c_int, C.c_char_p)
ERROR = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int, C.c_char_p)
ALLOC = C.CFUNCTYPE(C.c_void_p, C.c_void_p, C.c_size_t)
FREE = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)


class Host(C.Structure):
    _fields_ = [("abi", C.c_uint32 * 3), ("struct_size", C.c_uint32), ("host_data", C.c_void_p),
                ("log", LOG), ("error", ERROR), ("alloc", ALLOC), ("free", FREE)]


class Module(C.Structure):
    _fields_ = [("abi", C.c_uint32 * 3), ("name", C.c_char_p), ("init", C.c_void_p),
                ("deinit", C.c_void_p), ("count", C.CFUNCTYPE(C.c_uint32)),
                ("get", C.CFUNCTYPE(C.c_void_p, C.c_uint32))]


class Descriptor(C.Structure):
    _fields_ = [("reserved", C.c_uint32), ("id", C.c_char_p), ("version", C.c_char_p),
                ("description", C.c_char_p), ("interface_id", C.c_char_p),
                ("interface", C.c_void_p)]


class Options(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("count", C.c_uint32),
                ("keys", C.POINTER(C.c_char_p)), ("values", C.POINTER(C.c_char_p))]


class Input(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("device", C.c_int), ("n_metrics", C.c_uint32),
                ("metrics", C.c_void_p)]


class Metric(C.Structure):
    _fields_ = [("name", C.c_char * 32), ("value", C.c_double)]


class Profile(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("counters", C.c_uint32), ("n_metrics", C.c_uint32),
                ("metrics", Metric * 64), ("note", C.c_char * 256)]


class Interface(C.Structure):
    _fields_ = [("struct_size", C.c_uint32),
                ("create", C.CFUNCTYPE(C.c_int, C.POINTER(C.c_void_p), C.POINTER(Host),
                                       C.POINTER(Options), C.POINTER(Input))),
                ("passes", C.CFUNCTYPE(C.c_uint32, C.c_void_p)),
                ("begin", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint32)),
                ("end", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_uint32)),
                ("collect", C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(Profile))),
                ("destroy", C.CFUNCTYPE(None, C.c_void_p))]


def say(*a):
    print(*a, flush=True)


def main():
    lib = C.CDLL(sys.argv[1])
    options = [a.split("=", 1) for a in sys.argv[2:]]
    module = Module.in_dll(lib, "tforge_plugin_entry")
    descriptor = C.cast(module.get(0), C.POINTER(Descriptor)).contents
    say("plugin", descriptor.id, descriptor.interface_id)
    api = C.cast(descriptor.interface, C.POINTER(Interface)).contents
    log = LOG(lambda h, level, m: say("  log", level, m.decode()))
    error = ERROR(lambda h, code, m: (say("  error", code, m.decode()), code)[1])
    host = Host((1, 3, 0), C.sizeof(Host), None, log, error, ALLOC(0), FREE(0))
    gpu = torch.cuda.is_available()  # without one, only planning (chip=GH100) can be probed
    if gpu:
        x = torch.randn(1 << 24, device="cuda")
        x.mul_(2)  # the context exists, the kernel is loaded
        torch.cuda.synchronize()
    keys = (C.c_char_p * max(1, len(options)))(*[k.encode() for k, _ in options])
    values = (C.c_char_p * max(1, len(options)))(*[v.encode() for _, v in options])
    opts = Options(C.sizeof(Options), len(options), keys, values)
    inp = Input(C.sizeof(Input), 0, 0, None)
    state = C.c_void_p()
    for rnd in range(2):  # two rounds, as the forge loop profiles again
        if rnd == 0:
            say("create"); rc = api.create(C.byref(state), C.byref(host), C.byref(opts), C.byref(inp)); say(" ->", rc)
            if rc:
                return
        say("passes"); n = api.passes(state); say(" ->", n)
        if not gpu:
            break
        for p in range(n):
            say("begin", p); rc = api.begin(state, p)
            if rc:
                say(" ->", rc); return
            x.mul_(1.0001)
            torch.cuda.synchronize()
            say("end", p); rc = api.end(state, p)
            if rc:
                say(" ->", rc); return
        prof = Profile(C.sizeof(Profile))
        say("collect"); rc = api.collect(state, C.byref(prof)); say(" ->", rc)
        say(" counters", prof.counters, prof.note.decode())
        for i in range(prof.n_metrics):
            say(f"  {prof.metrics[i].name.decode():28s} {prof.metrics[i].value:.4g}")
    say("destroy"); api.destroy(state); say("done")


if __name__ == "__main__":
    main()
