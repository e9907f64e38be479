"""MoE routing as the serving libraries write it in Triton: a top-k softmax gating kernel (one program
per token, iterative argmax, renormalise), and moe_align_block_size in four stages (per-program
histogram of expert ids, column prefix sum, padded cumsum, scatter by atomics) filling
sorted_token_ids / expert_ids / num_tokens_post_pad preallocated by the caller."""
import torch
import triton
import triton.language as tl


def ceil_div(a, b):
    return (a + b - 1) // b


@triton.jit
def topk_softmax_kernel(logits_ptr, weights_ptr, ids_ptr, num_experts, stride_lm, stride_wm, stride_im,
                        TOPK: tl.constexpr, BLOCK_E: tl.constexpr, RENORMALIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_E)
    mask = offs < num_experts
    x = tl.load(logits_ptr + row * stride_lm + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, 0)
    p = tl.exp(x)
    p = p / tl.sum(p, 0)
    total = 0.0
    for k in tl.static_range(TOPK):
        m = tl.max(p, 0)
        idx = tl.min(tl.where(p == m, offs, BLOCK_E), 0)
        tl.store(weights_ptr + row * stride_wm + k, m)
        tl.store(ids_ptr + row * stride_im + k, idx)
        total += m
        p = tl.where(offs == idx, -1.0, p)
    if RENORMALIZE:
        for k in tl.static_range(TOPK):
            w = tl.load(weights_ptr + row * stride_wm + k)
            tl.store(weights_ptr + row * stride_wm + k, w / total)


def fused_topk(gating_output, topk, renormalize):
    M, E = gating_output.shape
    topk_weights = torch.empty(M, topk, dtype=torch.float32, device=gating_output.device)
    topk_ids = torch.empty(M, topk, dtype=torch.int32, device=gating_output.device)
    topk_softmax_kernel[(M,)](gating_output, topk_weights, topk_ids, E, gating_output.stride(0),
                              topk_weights.stride(0), topk_ids.stride(0), TOPK=topk,
                              BLOCK_E=triton.next_power_of_2(E), RENORMALIZE=renormalize)
    return topk_weights, topk_ids


@triton.jit
def moe_align_block_size_stage1(topk_ids_ptr, tokens_cnts_ptr, num_experts: tl.constexpr, numel: tl.constexpr,
                                tokens_per_thread: tl.constexpr):
    pid = tl.program_id(0)
    start_idx = pid * tokens_per_thread
    off_c = (pid + 1) * num_experts
    for i in range(tokens_per_thread):
        if start_idx + i < numel:
            idx = tl.load(topk_ids_ptr + start_idx + i)
            token_cnt = tl.load(tokens_cnts_ptr + off_c + idx)
            tl.store(tokens_cnts_ptr + off_c + idx, token_cnt + 1)


@triton.jit
def moe_align_block_size_stage2(tokens_cnts_ptr, num_experts: tl.constexpr):
    pid = tl.program_id(0)
    last_cnt = 0
    for i in range(1, num_experts + 1):
        token_cnt = tl.load(tokens_cnts_ptr + i * num_experts + pid)
        last_cnt = last_cnt + token_cnt
        tl.store(tokens_cnts_ptr + i * num_experts + pid, last_cnt)


@triton.jit
def moe_align_block_size_stage3(total_tokens_post_pad_ptr, tokens_cnts_ptr, cumsum_ptr,
                                num_experts: tl.constexpr, block_size: tl.constexpr):
    last_cumsum = 0
    off_cnt = num_experts * num_experts
    for i in range(1, num_experts + 1):
        token_cnt = tl.load(tokens_cnts_ptr + off_cnt + i - 1)
        last_cumsum = last_cumsum + tl.cdiv(token_cnt, block_size) * block_size
        tl.store(cumsum_ptr + i, last_cumsum)
    tl.store(total_tokens_post_pad_ptr, last_cumsum)


@triton.jit
def moe_align_block_size_stage4(topk_ids_ptr, sorted_token_ids_ptr, expert_ids_ptr, tokens_cnts_ptr, cumsum_ptr,
                                num_experts: tl.constexpr, block_size: tl.constexpr, numel: tl.constexpr,
                                tokens_per_thread: tl.constexpr):
    pid = tl.program_id(0)
    start_idx = tl.load(cumsum_ptr + pid)
    end_idx = tl.load(cumsum_ptr + pid + 1)

    for i in range(start_idx, end_idx, block_size):
        tl.store(expert_ids_ptr + i // block_size, pid)

    start_idx = pid * tokens_per_thread
    off_t = pid * num_experts

    for i in range(start_idx, tl.minimum(start_idx + tokens_per_thread, numel)):
        expert_id = tl.load(topk_ids_ptr + i)
        token_cnt = tl.load(tokens_cnts_ptr + off_t + expert_id)
        rank_post_pad = token_cnt + tl.load(cumsum_ptr + expert_id)
        tl.store(sorted_token_ids_ptr + rank_post_pad, i)
        tl.store(tokens_cnts_ptr + off_t + expert_id, token_cnt + 1)


def moe_align_block_size_triton(topk_ids, num_experts, block_size, sorted_token_ids, expert_ids,
                                num_tokens_post_pad):
    numel = topk_ids.numel()
    grid = (num_experts,)
    tokens_cnts = torch.zeros((num_experts + 1, num_experts), dtype=torch.int32, device=topk_ids.device)
    cumsum = torch.zeros((num_experts + 1,), dtype=torch.int32, device=topk_ids.device)
    tokens_per_thread = ceil_div(numel, num_experts)

    moe_align_block_size_stage1[grid](topk_ids, tokens_cnts, num_experts, numel, tokens_per_thread)
    moe_align_block_size_stage2[grid](tokens_cnts, num_experts)
    moe_align_block_size_stage3[(1,)](num_tokens_post_pad, tokens_cnts, cumsum, num_experts, block_size)
    moe_align_block_size_stage4[grid](topk_ids, sorted_token_ids, expert_ids, tokens_cnts, cumsum,
                                      num_experts, block_size, numel, tokens_per_thread)


def moe_align_block_size(topk_ids, block_size, num_experts):
    max_num_tokens_padded = topk_ids.numel() + num_experts * (block_size - 1)
    sorted_ids = torch.empty((max_num_tokens_padded,), dtype=torch.int32, device=topk_ids.device)
    sorted_ids.fill_(topk_ids.numel())
    max_num_m_blocks = triton.cdiv(max_num_tokens_padded, block_size)
    expert_ids = torch.empty((max_num_m_blocks,), dtype=torch.int32, device=topk_ids.device)
    num_tokens_post_pad = torch.empty((1), dtype=torch.int32, device=topk_ids.device)
    moe_align_block_size_triton(topk_ids, num_experts, block_size, sorted_ids, expert_ids, num_tokens_post_pad)
    return sorted_ids, expert_ids, num_tokens_post_pad


if __name__ == "__main__":
    torch.manual_seed(0)
    M, E, K, BS = 20, 8, 2, 4
    g = torch.randn(M, E)
    w, ids = fused_topk(g, K, True)
    rw, rids = torch.topk(torch.softmax(g, -1), K, -1)
    torch.testing.assert_close(w, rw / rw.sum(-1, keepdim=True))
    assert torch.equal(ids.long(), rids)
    sorted_ids, expert_ids, ntp = moe_align_block_size(ids, BS, E)
    flat = ids.flatten()
    counts = torch.bincount(flat.long(), minlength=E)
    padded = ((counts + BS - 1) // BS) * BS
    assert int(ntp) == int(padded.sum())
    starts = torch.cumsum(padded, 0) - padded
    for e in range(E):
        got = sorted_ids[starts[e]: starts[e] + counts[e]]
        assert torch.equal(got.sort().values.long(), (flat == e).nonzero().flatten()), e
        assert (expert_ids[starts[e] // BS: (starts[e] + padded[e]) // BS] == e).all()
    print("ok")
