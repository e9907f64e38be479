"""The reference of attention_varlen.json: the fixture's own (softmax(Q K^T / sqrt(d)) V within
each sequence, in fp32), on the task's inputs."""
from attention_varlen import reference as _reference


def reference(inputs):
    return _reference(*(inputs[n] for n in ("q", "k", "v", "cu_seqlens")))
