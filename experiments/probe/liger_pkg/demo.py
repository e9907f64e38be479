"""python -m liger_pkg.demo: fused linear cross entropy forward and backward against torch."""
import torch

from . import LigerFusedLinearCrossEntropyFunction

if __name__ == "__main__":
    torch.manual_seed(0)
    BT, H, V = 24, 16, 100
    x = torch.randn(BT, H, requires_grad=True)
    w = torch.randn(V, H, requires_grad=True)
    y = torch.randint(0, V, (BT,))
    y[3] = -100
    loss = LigerFusedLinearCrossEntropyFunction.apply(x, w, y)
    (loss * 2.0).backward()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    ref = torch.nn.functional.cross_entropy(x2 @ w2.t(), y, ignore_index=-100)
    (ref * 2.0).backward()
    torch.testing.assert_close(loss, ref, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(x.grad, x2.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(w.grad, w2.grad, atol=1e-4, rtol=1e-4)
    print("ok")
