"""Liger's fused linear cross entropy forward: the batch in chunks; per chunk the logits by a torch matmul,
the Triton cross-entropy kernel writes the loss and (in place) the logits' gradient, from which the
input and weight gradients accumulate. An autograd Function with @ensure_contiguous-less forward."""
import torch
import triton

from .cross_entropy import MAX_FUSED_SIZE, _NUM_WARPS, element_mul_kernel, liger_cross_entropy_kernel
from .utils import ensure_contiguous


def fused_linear_cross_entropy_forward(_input, weight, target, bias=None, ignore_index=-100,
                                       label_smoothing=0.0, reduction="mean"):
    device = _input.device
    BT, H = _input.shape
    V = weight.shape[0]
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(V))

    inc_factor = triton.cdiv(V, H)
    chunk_size = triton.next_power_of_2(triton.cdiv(BT, inc_factor))
    num_chunks = triton.cdiv(BT, chunk_size)

    grad_weight = torch.zeros_like(weight, device=device) if weight.requires_grad else None
    grad_input = torch.zeros_like(_input, device=device)
    loss_1d = torch.zeros(BT, dtype=torch.float32, device=device)

    total_n_non_ignore = (target != ignore_index).sum().item()

    for chunk_id in range(num_chunks):
        start_idx = chunk_id * chunk_size
        end_idx = min((chunk_id + 1) * chunk_size, BT)
        _input_chunk = _input[start_idx:end_idx]

        logits_chunk = _input_chunk @ weight.t()
        if bias is not None:
            logits_chunk = logits_chunk + bias
        target_chunk = target[start_idx:end_idx]

        n_rows = logits_chunk.shape[0]
        loss_1d_slice = loss_1d[start_idx:end_idx]
        logits_chunk = logits_chunk.contiguous()
        target_chunk = target_chunk.contiguous()

        liger_cross_entropy_kernel[(n_rows,)](
            X_ptr=logits_chunk, X_stride=logits_chunk.stride(-2), Y_ptr=target_chunk,
            Y_stride=target_chunk.stride(-1), loss_ptr=loss_1d_slice, loss_stride=loss_1d_slice.stride(-1),
            n_cols=V, n_non_ignore=total_n_non_ignore, ignore_index=ignore_index,
            label_smoothing=label_smoothing, reduction=reduction, BLOCK_SIZE=BLOCK_SIZE, num_warps=_NUM_WARPS,
        )
        loss_1d[start_idx:end_idx] = loss_1d_slice
        grad_logits_chunk = logits_chunk
        grad_input[start_idx:end_idx] = grad_logits_chunk @ weight
        if grad_weight is not None:
            torch.addmm(input=grad_weight, mat1=logits_chunk.t().to(_input_chunk.dtype), mat2=_input_chunk,
                        out=grad_weight, alpha=1.0, beta=1.0)

    loss = torch.sum(loss_1d)
    return loss, grad_input, grad_weight


def element_mul(x, grad_output):
    BT, V = x.shape
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(V))
    element_mul_kernel[(BT,)](x, x.stride(-2), grad_output, V, BLOCK_SIZE=BLOCK_SIZE, num_warps=_NUM_WARPS)
    return x


class LigerFusedLinearCrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, _input, weight, target, bias=None, ignore_index=-100, label_smoothing=0.0,
                reduction="mean"):
        loss, grad_input, grad_weight = fused_linear_cross_entropy_forward(
            _input, weight, target, bias, ignore_index, label_smoothing, reduction)
        ctx.save_for_backward(grad_input.detach(), grad_weight.detach() if grad_weight is not None else None)
        return loss

    @staticmethod
    @ensure_contiguous
    def backward(ctx, grad_output):
        grad_input, grad_weight = ctx.saved_tensors
        if not torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
            grad_input = element_mul(grad_input, grad_output)
            if grad_weight is not None:
                grad_weight = element_mul(grad_weight, grad_output)
        return grad_input, grad_weight, None, None, None, None, None
