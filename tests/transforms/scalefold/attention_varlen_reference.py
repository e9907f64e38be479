"""The reference of attention_varlen.json: softmax(Q K^T / sqrt(d)) V within each sequence of
the packed batch (tokens, heads, d), in fp32, rounded to Q's dtype."""
import math

import torch


def reference(inputs):
    q, k, v, cu = (inputs[n] for n in ("q", "k", "v", "cu_seqlens"))
    out = torch.empty_like(q)
    bounds = cu.tolist()
    for a, b in zip(bounds[:-1], bounds[1:]):
        qs, ks, vs = (x[a:b].float().transpose(0, 1) for x in (q, k, v))
        p = torch.softmax(qs @ ks.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
        out[a:b] = (p @ vs).transpose(0, 1).to(q.dtype)
    return out
