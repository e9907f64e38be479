"""A user's script for each file of the realistic fixtures (tests/python/fixtures/realistic/):
`python drive.py NAME` imports the file and calls its own public wrapper once, at a shape worth
tuning on a GPU and at a small one in the CPU interpreter, and checks the result against torch as
the user's test would. `tforge capture -- python drive.py NAME` records what it launched (run.py);
`python drive.py --list` prints the names. Adding a file to the suite is one function, named in
ENTRIES.
"""
import math
import os
import sys

import torch

GPU = torch.cuda.is_available()
if not GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton's import: the fixtures read it
DEVICE = "cuda" if GPU else "cpu"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "python", "fixtures", "realistic"))


def randn(*shape, dtype=torch.float16):
    return torch.randn(*shape, device=DEVICE, dtype=dtype)


def causal_softmax_v(q, k, v, sm_scale):
    """softmax(q k^T * sm_scale, causal) v in float32, on (batch, heads, seqlen, d)."""
    s = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
    n = s.shape[-1]
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)


def gemm_autotune():
    import gemm_autotune
    n = 4096 if GPU else 64
    a, b = randn(n, n), randn(n, n)
    torch.testing.assert_close(gemm_autotune.matmul(a, b), (a.float() @ b.float()).half(),
                               atol=5e-2, rtol=1e-2)


def rms_norm_liger():
    import rms_norm_liger
    rows, cols = (4096, 8192) if GPU else (16, 300)
    x, w = randn(rows, cols), randn(cols)
    y, rstd = rms_norm_liger.rms_norm_forward(x, w, 1e-6)
    want_rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
    torch.testing.assert_close(y, (x.float() * want_rstd[:, None] * w.float()).half(),
                               atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(rstd, want_rstd, atol=1e-4, rtol=1e-4)


def matvec_heuristics():
    import matvec_heuristics
    m, k = (8192, 8192) if GPU else (70, 256)
    a, x = randn(m, k, dtype=torch.float32), randn(k, dtype=torch.float32)
    torch.testing.assert_close(matvec_heuristics.matvec(a, x), a @ x, atol=1e-2, rtol=1e-3)


def attention_causal():
    import attention_causal
    q, k, v = (randn(*((4, 32, 4096, 64) if GPU else (1, 2, 64, 32))) for _ in range(3))
    sm_scale = 1 / math.sqrt(q.shape[-1])
    torch.testing.assert_close(attention_causal.attention(q, k, v, True, sm_scale),
                               causal_softmax_v(q, k, v, sm_scale), atol=2e-2, rtol=2e-2)


def attention_varlen():
    import attention_varlen
    lengths = [2048, 1536, 1000, 2048, 512, 777, 1999, 300] if GPU else [70, 33, 64]
    heads, d = (32, 64) if GPU else (2, 32)
    cu = torch.tensor([0] + lengths, device=DEVICE).cumsum(0).to(torch.int32)
    q, k, v = (randn(sum(lengths), heads, d) for _ in range(3))
    out = attention_varlen.attention_varlen(q, k, v, cu, max(lengths))
    for a, b in zip(cu[:-1].tolist(), cu[1:].tolist()):
        qs, ks, vs = (t[a:b].transpose(0, 1) for t in (q, k, v))
        s = (qs.float() @ ks.float().transpose(-1, -2)) / math.sqrt(d)
        want = (torch.softmax(s, dim=-1) @ vs.float()).half().transpose(0, 1)
        torch.testing.assert_close(out[a:b], want, atol=2e-2, rtol=2e-2)


def device_queries():
    import device_queries
    x, y = (randn(2**26 if GPU else 5000, dtype=torch.float32) for _ in range(2))
    torch.testing.assert_close(device_queries.add(x, y), x + y)
    torch.testing.assert_close(device_queries.add_persistent(x, y), x + y)


def flash_attn_causal():
    import flash_attn_causal
    q, k, v = (randn(*((4, 4096, 32, 64) if GPU else (1, 100, 2, 32))) for _ in range(3))
    want = causal_softmax_v(*(t.transpose(1, 2) for t in (q, k, v)), 1 / math.sqrt(q.shape[-1]))
    torch.testing.assert_close(flash_attn_causal.flash_attn_causal(q, k, v),
                               want.transpose(1, 2), atol=2e-2, rtol=2e-2)


def softmax_inplace():
    import softmax_inplace
    x = randn(*((4096, 8192) if GPU else (37, 300)), dtype=torch.float32)
    torch.testing.assert_close(softmax_inplace.softmax(x), torch.softmax(x, dim=1),
                               atol=1e-6, rtol=1e-5)


def pkg_layer_norm():
    from pkg.ops import layer_norm
    rows, cols = (4096, 8192) if GPU else (9, 200)
    x, w, b = randn(rows, cols), randn(cols), randn(cols)
    want = torch.nn.functional.layer_norm(x.float(), (cols,), w.float(), b.float(), 1e-5)
    torch.testing.assert_close(layer_norm(x, w, b), want.half(), atol=1e-2, rtol=1e-2)


ENTRIES = {f.__name__: f for f in (gemm_autotune, rms_norm_liger, matvec_heuristics,
                                   attention_causal, attention_varlen, device_queries,
                                   flash_attn_causal, softmax_inplace, pkg_layer_norm)}

if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print("\n".join(ENTRIES))
    else:
        torch.manual_seed(0)
        ENTRIES[sys.argv[1]]()
