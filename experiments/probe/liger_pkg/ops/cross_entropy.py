"""Liger's cross-entropy kernel pieces used by the fused linear cross entropy: the kernel computes the
loss per row and writes the gradient over the logits in place; element_mul_kernel scales a gradient."""
import triton
import triton.language as tl

from .utils import is_hip

MAX_FUSED_SIZE = 65536 // 2


@triton.jit
def liger_cross_entropy_kernel(
    X_ptr, X_stride, Y_ptr, Y_stride, loss_ptr, loss_stride, n_cols, n_non_ignore, ignore_index,
    label_smoothing: tl.constexpr, reduction: tl.constexpr, BLOCK_SIZE: tl.constexpr,
):
    program_id = tl.program_id(0).to(tl.int64)
    Y_ptr += program_id * Y_stride
    y = tl.load(Y_ptr)
    X_ptr += program_id * X_stride

    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            X_offsets = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + X_offsets, 0.0, mask=X_offsets < n_cols)
        return

    loss_ptr += program_id * loss_stride
    m = float("-inf")
    d = 0.0
    ori_X_y = tl.load(X_ptr + y).cast(tl.float32)
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=float("-inf")).cast(tl.float32)
        block_max = tl.max(X_block)
        m_new = tl.maximum(m, block_max)
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(X_block - m_new))
        m = m_new
    lse = m + tl.log(d)

    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=float("-inf")).cast(tl.float32)
        if reduction == "mean":
            X_block = tl.exp(X_block - m) / d / (n_non_ignore)
        else:
            X_block = tl.exp(X_block - m) / d
        tl.store(X_ptr + X_offsets, X_block, mask=X_offsets < n_cols)

    tl.debug_barrier()
    loss = lse - ori_X_y
    if reduction == "mean":
        loss = loss / n_non_ignore
    X_y = tl.load(X_ptr + y)
    if reduction == "mean":
        X_y += -1 / (n_non_ignore)
    else:
        X_y += -1
    tl.store(X_ptr + y, X_y)
    tl.store(loss_ptr, loss)


_NUM_WARPS = 32 if not is_hip() else 16


@triton.jit
def element_mul_kernel(X_ptr, X_stride, grad_output_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    X_ptr += program_id * X_stride
    grad_output = tl.load(grad_output_ptr)
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols)
        tl.store(X_ptr + X_offsets, X_block * grad_output, mask=X_offsets < n_cols)
