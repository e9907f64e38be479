#!/usr/bin/env python3
"""The experiments matmul at 4096^3 under TMA descriptors, their epilogue subtiling and
persistent programs, at three knob winners: each variant checked on the GPU (fresh inputs,
poisoned output) and then timed against torch.matmul, interleaved (7 rounds of do_bench).

    python3 experiments/transforms/tma_matmul.py make TFORGE DIR   # anywhere: the variants
    python3 experiments/transforms/tma_matmul.py time DIR          # on the GPU
"""
import os
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
KERNEL = os.path.join(ROOT, "experiments", "kernels", "matmul", "kernel.py")
TASK = os.path.join(ROOT, "experiments", "kernels", "matmul", "task.json")
VARIANTS = {"tma": ["tma=True"], "tma_subtile": ["tma=True", "tma_subtile=True"],
            "persistent": ["persistent_programs=132"],
            "tma_persistent": ["tma=True", "persistent_programs=132"],
            "tma_subtile_persistent": ["tma=True", "tma_subtile=True", "persistent_programs=132"]}
CONFIGS = {"128x256x64 s3": (64, 3), "128x256x64 s4": (64, 4), "128x256x32 s5": (32, 5)}


def make(tforge, folder):
    os.makedirs(folder, exist_ok=True)
    for name, sets in VARIANTS.items():
        args = [a for s in sets for a in ("--set", s)]
        subprocess.run([tforge, "transform", KERNEL, *args, "--out",
                        os.path.join(folder, name + ".py")], check=True)


def time(folder):
    sys.path.insert(0, os.path.join(ROOT, "engine", "worker", "python"))
    import torch
    import triton.testing
    from tforge_worker import variants, worker
    spec = worker.load_task(TASK)
    loaded = worker.get(spec)
    shape = {"M": 4096, "N": 4096, "K": 4096}
    texts = {"plain": None}
    for name in VARIANTS:
        with open(os.path.join(folder, name + ".py")) as f:
            texts[name] = f.read()
    inputs = worker.make_inputs(loaded, shape, 0)
    entries = []
    for cname, (block_k, stages) in CONFIGS.items():
        config = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": block_k, "GROUP_M": 8,
                  "num_warps": 8, "num_stages": stages}
        for vname, text in texts.items():
            r = worker.run_check(spec, config, shape, seed=1, variant=text)
            print(f"{cname} {vname}: {r['status']} {r['message'][:160]}", flush=True)
            if r["status"] == "ok":
                with variants.active(loaded, text):
                    entries.append((f"{cname} {vname}", worker.bind(loaded, inputs, config,
                                                                    shape), text))
    a, b = inputs["a"], inputs["b"]
    entries.append(("torch.matmul", lambda: torch.matmul(a, b), None))
    times = {name: [] for name, _, _ in entries}
    for _ in range(7):
        for name, run, text in entries:
            with variants.active(loaded, text):
                times[name].append(triton.testing.do_bench(run, warmup=25, rep=100))
    ref = statistics.median(times["torch.matmul"])
    for name, _, _ in entries:
        m = statistics.median(times[name])
        print(f"{name:40} {m:8.4f} ms {ref / m:6.3f}x torch.matmul")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "time":
        time(sys.argv[2])
    else:
        sys.exit(__doc__)
