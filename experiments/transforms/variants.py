#!/usr/bin/env python3
"""Source-transform variants of one example at a few knob points, each checked on the GPU (fresh
inputs, poisoned outputs) and then timed against torch's own op, interleaved (7 rounds,
interleave.py). A study names the task, the variants (`tforge transform --set` values), the knob
points and the torch expression:

  matmul  the matmul at 4096^3 with TMA descriptors, their epilogue subtiling and persistent
          programs, at three knob winners (128 x 256 tiles); against torch.matmul
  attention  the attention example (experiments/kernels/attention) at 4 x 32 x 4096 x 64 with
          masksplit at three knob winners; against F.scaled_dot_product_attention
  causal  the one-loop causal attention (tests/python/fixtures/realistic/flash_attn_causal.py)
          at 4 x 4096 x 32 x 64 with masksplit's diagonal split, with exp2 and both; against
          F.scaled_dot_product_attention(is_causal=True)
  skinny  the skinny GEMM (experiments/kernels/skinny_gemm) at 1024 x 1024 x 16384 with K split
          2, 4, 8 and 16 ways at its shipped configs' tiles; against torch.matmul

    python3 experiments/transforms/variants.py make STUDY TFORGE DIR   # anywhere: the variants
    python3 experiments/transforms/variants.py time STUDY DIR          # on the GPU

`time` takes every .py file in DIR as a variant (named by the file), so that a variant written
by hand can be measured beside the generated ones before a transform is built for it.
"""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MATMUL_POINT = {"BLOCK_M": 128, "BLOCK_N": 256, "GROUP_M": 8, "num_warps": 8}
STUDIES = {
    "matmul": {
        "kernel": "experiments/kernels/matmul/kernel.py",
        "task": "experiments/kernels/matmul/task.json",
        "shape": {"M": 4096, "N": 4096, "K": 4096},
        "variants": {"tma": ["tma=True"], "tma_subtile": ["tma=True", "tma_subtile=True"],
                     "persistent": ["persistent_programs=132"],
                     "tma_persistent": ["tma=True", "persistent_programs=132"],
                     "tma_subtile_persistent": ["tma=True", "tma_subtile=True",
                                                "persistent_programs=132"],
                     "tma_persistent_flatten": ["tma=True", "persistent_programs=132",
                                                "persistent_flatten=True"],
                     "tma_subtile_persistent_flatten": ["tma=True", "tma_subtile=True",
                                                        "persistent_programs=132",
                                                        "persistent_flatten=True"]},
        "configs": {"128x256x64 s3": dict(MATMUL_POINT, BLOCK_K=64, num_stages=3),
                    "128x256x64 s4": dict(MATMUL_POINT, BLOCK_K=64, num_stages=4),
                    "128x256x32 s5": dict(MATMUL_POINT, BLOCK_K=32, num_stages=5)},
        "torch": ("torch.matmul", "torch.matmul(a, b)"),
    },
    "attention": {
        "kernel": "experiments/kernels/attention/kernel.py",
        "task": "experiments/kernels/attention/task.json",
        "shape": {"Z": 4, "H": 32, "S": 4096, "D": 64},
        "variants": {"masksplit": ["masksplit0=True"]},
        "configs": {"128x64 w8 s3": {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8,
                                     "num_stages": 3},
                    "64x64 w4 s3": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4,
                                    "num_stages": 3},
                    "128x128 w8 s2": {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8,
                                      "num_stages": 2}},
        "torch": ("sdpa", "F.scaled_dot_product_attention(q, k, v)"),
    },
    "causal": {
        "kernel": "tests/python/fixtures/realistic/flash_attn_causal.py",
        "task": "tests/transforms/masksplit/flash_attn_causal.json",
        "shape": {"B": 4, "S": 4096, "H": 32, "D": 64},
        "variants": {"masksplit": ["masksplit0=True"], "exp2": ["exp2=True"],
                     "masksplit_exp2": ["masksplit0=True", "exp2=True"]},
        "configs": {"128x128 w4": {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4},
                    "128x64 w4 s2": {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4,
                                     "num_stages": 2},
                    "128x64 w8 s3": {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8,
                                     "num_stages": 3}},
        "torch": ("sdpa causal", "F.scaled_dot_product_attention(q.transpose(1, 2), "
                  "k.transpose(1, 2), v.transpose(1, 2), is_causal=True)"),
    },
    "skinny": {
        "kernel": "experiments/kernels/skinny_gemm/kernel.py",
        "task": "experiments/kernels/skinny_gemm/task.json",
        "shape": {"M": 1024, "N": 1024, "K": 16384},
        "variants": {f"split{s}": [f"split_k={s}"] for s in (2, 4, 8, 16)},
        "configs": {"128x128x64 w8 s3": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
                                         "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
                    "128x64x64 w4 s4": {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64,
                                        "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
                    "64x64x64 w4 s4": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64,
                                       "GROUP_M": 8, "num_warps": 4, "num_stages": 4}},
        "torch": ("torch.matmul", "torch.matmul(a, b)"),
    },
}


def make(study, tforge, folder):
    os.makedirs(folder, exist_ok=True)
    for name, sets in study["variants"].items():
        args = [a for s in sets for a in ("--set", s)]
        subprocess.run([tforge, "transform", os.path.join(ROOT, study["kernel"]), *args,
                        "--out", os.path.join(folder, name + ".py")], check=True)


def time(study, folder):
    from interleave import Entries, table, worker
    spec = worker.load_task(os.path.join(ROOT, study["task"]))
    loaded = worker.get(spec)
    shape = study["shape"]
    texts = {"plain": None}
    for file in sorted(f for f in os.listdir(folder) if f.endswith(".py")):
        with open(os.path.join(folder, file)) as f:
            texts[file[:-3]] = f.read()
    entries = Entries(loaded, shape)
    for cname, config in study["configs"].items():
        for vname, text in texts.items():
            r = worker.run_check(spec, config, shape, seed=1, variant=text)
            print(f"{cname} {vname}: {r['status']} {r['message'][:160]}", flush=True)
            if r["status"] == "ok":
                entries.kernel(f"{cname} {vname}", config, text)
    ref, expr = study["torch"]
    entries.torch_op(ref, expr)
    print("\n".join(table(entries.time(7), ref)))


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "make" and args[1] in STUDIES:
        make(STUDIES[args[1]], args[2], args[3])
    elif len(args) == 3 and args[0] == "time" and args[1] in STUDIES:
        time(STUDIES[args[1]], args[2])
    else:
        sys.exit(__doc__)
