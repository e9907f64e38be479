"""The attention example's kernel launched with a negative scale, softmax(-Q K^T / sqrt(D)) V:
scalefold's variant is right only for a positive one, so its guard must launch the kernel as the
file has it. The kernel is the example's own (loaded from its file, so that the variant replaces
it), the launch and the reference are this file's."""
import importlib.util
import math
import os

import torch
import triton

_root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
_spec = importlib.util.spec_from_file_location(
    "attention_kernel", os.path.join(_root, "experiments", "kernels", "attention", "kernel.py"))
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)


def attention(inputs, config):
    q, k, v, o = inputs["q"], inputs["k"], inputs["v"], inputs["o"]
    Z, H, S, D = q.shape
    grid = (triton.cdiv(S, config["BLOCK_M"]), Z * H)
    strides = [t.stride(i) for t in (q, k, v, o) for i in range(3)]
    _example.attn_fwd[grid](q, k, v, o, -1.0 / math.sqrt(D), *strides, H, S, HEAD_DIM=D,
                            BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"])


def reference(inputs):
    q, k, v = (inputs[n].float() for n in "qkv")
    p = torch.softmax(-(q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1]), dim=-1)
    return (p @ v).half()
