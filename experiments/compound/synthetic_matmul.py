"""A SYNTHETIC compound rewrite space, not a measurement: a Kernel Tuner cache of a made-up matmul
over knobs x tma x persistent x split-k, for developing and testing the compound moves (issue 36,
item 2) until the recorded rewrite spaces come. Every time is computed by the model below.

The knob winner (128x128x64, GROUP_M 1, 4 warps, 3 stages, no rewrite) takes 1.00 ms. The
optimum needs two rewrites and four knobs together: TMA with a larger tile (BLOCK_N 256), fewer
stages (2) and more warps (8), plus persistent programs with GROUP_M 8, at 0.88 ms. Each of those
six changes alone makes the knob winner slower, and so does any two of them, so one-at-a-time
moves from the knob winner never reach it. Three more rewrites that change little (a persistent
loop flattened, an eviction hint, a register cap) make the space as large, for its size, as a
tune's with every transform.

    python experiments/compound/synthetic_matmul.py OUT.json.gz
"""
import gzip
import itertools
import json
import math
import random
import sys

PARAMS = {
    "BLOCK_M": [64, 128, 256],
    "BLOCK_N": [64, 128, 256],
    "BLOCK_K": [32, 64],
    "GROUP_M": [1, 8],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
    "tma": [0, 1],
    "persistent_programs": [0, 132],
    "split_k": [1, 2, 4],
    # rewrites that change little here, as in a tune with every transform: a space as large
    "persistent_flatten": [0, 1],
    "eviction": [0, 1, 2],
    "maxnreg": [0, 128, 255],
}
# log time of each tile shape against 128x128
TILE = {(64, 64): 0.45, (64, 128): 0.25, (128, 64): 0.25, (128, 128): 0.0, (128, 256): 0.06,
        (256, 128): 0.08, (256, 256): 0.30, (64, 256): 0.30, (256, 64): 0.32}
SHARED_BYTES = 232448  # an H100's shared memory a block


def log_time(c):
    big = c["BLOCK_M"] * c["BLOCK_N"] > 128 * 128
    tma, persistent = c["tma"] == 1, c["persistent_programs"] > 0
    t = TILE[c["BLOCK_M"], c["BLOCK_N"]] + (0.08 if c["BLOCK_K"] == 32 else 0.0)
    t += (-0.02 - (0.03 if tma else 0.0)) if c["num_warps"] == 8 and big else \
        (0.04 if c["num_warps"] == 8 else 0.0)
    t += {2: -0.02, 3: 0.0, 4: 0.06}[c["num_stages"]] if tma else \
        {2: 0.10, 3: 0.0, 4: 0.03}[c["num_stages"]]
    if tma:  # descriptors pay with a larger tile only
        t += 0.05 - (0.10 if c["BLOCK_N"] == 256 else 0.0)
    if persistent:  # pays with a swizzled tile order, more with TMA
        t += 0.03 - (0.05 if c["GROUP_M"] == 8 else 0.0) - (0.04 if tma else 0.0)
    elif c["GROUP_M"] == 8:
        t += 0.02
    t += {1: 0.0, 2: 0.12, 4: 0.25}[c["split_k"]] - (0.03 if c["split_k"] > 1 and
                                                     c["BLOCK_M"] == 64 else 0.0)
    t += 0.01 * c["eviction"] - (0.005 if c["persistent_flatten"] and persistent else 0.0)
    if c["maxnreg"] == 128:  # spills once the accumulator needs more
        t += 0.35 if c["BLOCK_M"] * c["BLOCK_N"] > 128 * 128 else 0.02
    return t


def main():
    rng = random.Random(36)
    keys = list(PARAMS)
    cache = {}
    for values in itertools.product(*PARAMS.values()):
        c = dict(zip(keys, values))
        shared = 2 * (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * c["num_stages"]
        entry = dict(c)
        if shared > SHARED_BYTES:
            entry["time"] = "CompilationFailedConfig"
        else:  # a little deterministic noise so that no two points tie
            entry["time"] = round(math.exp(log_time(c)) * (1 + 0.004 * (rng.random() - 0.5)), 5)
        cache[",".join(str(v) for v in values)] = entry
    doc = {"device_name": "synthetic (not measured)", "kernel_name": "matmul_compound_synthetic",
           "problem_size": [4096, 4096, 4096], "tune_params_keys": keys, "tune_params": PARAMS,
           "objective": "time", "cache": cache}
    ok = {k: e["time"] for k, e in cache.items() if not isinstance(e["time"], str)}
    best = min(ok, key=ok.get)
    print(f"{len(cache)} points, {len(ok)} run; optimum {best} at {ok[best]:.3f} ms; knob winner "
          f"{ok['128,128,64,1,4,3,0,0,1,0,0,0']:.3f} ms", file=sys.stderr)
    with gzip.open(sys.argv[1], "wt") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
