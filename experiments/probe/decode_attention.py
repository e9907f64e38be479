"""Decode attention in two stages as the serving libraries write it (split-KV): stage 1 writes per-split
partial outputs and log-sum-exp into a caller-provided `attn_logits` buffer, indexing the KV cache through
`req_to_token[b_req_idx]`; stage 2 reduces the splits into `o`. Both launched by one function that
returns nothing."""
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel_stage1(
    Q, K_Buffer, V_Buffer, sm_scale, Req_to_tokens, B_req_idx, B_Seqlen, Att_Out,
    stride_req_to_tokens_b, stride_qbs, stride_qh, stride_buf_kbs, stride_buf_kh,
    stride_buf_vbs, stride_buf_vh, stride_mid_ob, stride_mid_oh, stride_mid_os,
    kv_group_num: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_DV: tl.constexpr,
    BLOCK_N: tl.constexpr, NUM_KV_SPLITS: tl.constexpr, logit_cap: tl.constexpr,
    Lk: tl.constexpr, Lv: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    split_kv_id = tl.program_id(2)

    cur_kv_head = cur_head // kv_group_num

    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    mask_d = offs_d < Lk
    mask_dv = offs_dv < Lv
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
    cur_batch_req_idx = tl.load(B_req_idx + cur_batch)

    off_q = cur_batch * stride_qbs + cur_head * stride_qh + offs_d
    q = tl.load(Q + off_q, mask=mask_d, other=0.0)

    kv_len_per_split = tl.cdiv(cur_batch_seq_len, NUM_KV_SPLITS)
    split_kv_start = kv_len_per_split * split_kv_id
    split_kv_end = tl.minimum(split_kv_start + kv_len_per_split, cur_batch_seq_len)

    e_max = -float("inf")
    e_sum = 0.0
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)

    if split_kv_end > split_kv_start:
        for start_n in range(split_kv_start, split_kv_end, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            kv_loc = tl.load(Req_to_tokens + stride_req_to_tokens_b * cur_batch_req_idx + offs_n,
                             mask=offs_n < split_kv_end, other=0)
            offs_buf_k = kv_loc[:, None] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_d[None, :]
            k = tl.load(K_Buffer + offs_buf_k, mask=(offs_n[:, None] < split_kv_end) & (mask_d[None, :]), other=0.0)
            qk = tl.sum(q[None, :] * k, 1)
            qk *= sm_scale

            if logit_cap > 0:
                qk = logit_cap * (2 * tl.sigmoid(2 * qk / logit_cap) - 1)  # tanh

            qk = tl.where(offs_n < split_kv_end, qk, float("-inf"))

            offs_buf_v = kv_loc[:, None] * stride_buf_vbs + cur_kv_head * stride_buf_vh + offs_dv[None, :]
            v = tl.load(V_Buffer + offs_buf_v, mask=(offs_n[:, None] < split_kv_end) & (mask_dv[None, :]), other=0.0)

            n_e_max = tl.maximum(tl.max(qk, 0), e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max)
            acc *= re_scale
            acc += tl.sum(p[:, None] * v, 0)

            e_sum = e_sum * re_scale + tl.sum(p, 0)
            e_max = n_e_max

        offs_mid_o = cur_batch * stride_mid_ob + cur_head * stride_mid_oh + split_kv_id * stride_mid_os + offs_dv
        tl.store(Att_Out + offs_mid_o, acc / e_sum, mask=(mask_dv))
        offs_mid_o_1 = cur_batch * stride_mid_ob + cur_head * stride_mid_oh + split_kv_id * stride_mid_os + Lv
        tl.store(Att_Out + offs_mid_o_1, e_max + tl.log(e_sum))


@triton.jit
def _fwd_kernel_stage2(
    Mid_O, O, B_Seqlen, stride_mid_ob, stride_mid_oh, stride_mid_os, stride_obs, stride_oh,
    NUM_KV_SPLITS: tl.constexpr, BLOCK_DV: tl.constexpr, Lv: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)

    offs_d = tl.arange(0, BLOCK_DV)
    mask_d = offs_d < Lv

    e_sum = 0.0
    e_max = -float("inf")
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)

    offs_v = cur_batch * stride_mid_ob + cur_head * stride_mid_oh + offs_d
    offs_logic = cur_batch * stride_mid_ob + cur_head * stride_mid_oh + Lv

    for split_kv_id in range(0, NUM_KV_SPLITS):
        kv_len_per_split = tl.cdiv(cur_batch_seq_len, NUM_KV_SPLITS)
        split_kv_start = kv_len_per_split * split_kv_id
        split_kv_end = tl.minimum(split_kv_start + kv_len_per_split, cur_batch_seq_len)

        if split_kv_end > split_kv_start:
            tv = tl.load(Mid_O + offs_v + split_kv_id * stride_mid_os, mask=mask_d, other=0.0)
            tlogic = tl.load(Mid_O + offs_logic + split_kv_id * stride_mid_os)
            n_e_max = tl.maximum(tlogic, e_max)

            old_scale = tl.exp(e_max - n_e_max)
            acc *= old_scale
            exp_logic = tl.exp(tlogic - n_e_max)
            acc += exp_logic * tv

            e_sum = e_sum * old_scale + exp_logic
            e_max = n_e_max

    tl.store(O + cur_batch * stride_obs + cur_head * stride_oh + offs_d, acc / e_sum, mask=mask_d)


def _decode_att_m_fwd(q, k_buffer, v_buffer, att_out, req_to_token, b_req_idx, b_seqlen, num_kv_splits,
                      sm_scale, logit_cap):
    BLOCK = 64
    NUM_KV_SPLITS = num_kv_splits
    Lk = k_buffer.shape[-1]
    Lv = v_buffer.shape[-1]
    batch, head_num = b_req_idx.shape[0], q.shape[1]
    grid = (batch, head_num, NUM_KV_SPLITS)
    kv_group_num = q.shape[1] // k_buffer.shape[1]
    num_warps = 4 if kv_group_num == 1 else 2
    BLOCK_DMODEL = triton.next_power_of_2(Lk)
    BLOCK_DV = triton.next_power_of_2(Lv)
    _fwd_kernel_stage1[grid](
        q, k_buffer, v_buffer, sm_scale, req_to_token, b_req_idx, b_seqlen, att_out,
        req_to_token.stride(0), q.stride(0), q.stride(1), k_buffer.stride(0), k_buffer.stride(1),
        v_buffer.stride(0), v_buffer.stride(1), att_out.stride(0), att_out.stride(1), att_out.stride(2),
        kv_group_num=kv_group_num, BLOCK_DMODEL=BLOCK_DMODEL, BLOCK_DV=BLOCK_DV, BLOCK_N=BLOCK,
        NUM_KV_SPLITS=NUM_KV_SPLITS, logit_cap=logit_cap, num_warps=num_warps, num_stages=2, Lk=Lk, Lv=Lv,
    )


def _decode_softmax_reducev_fwd(logits, q, o, v_buffer, b_seq_len, num_kv_splits):
    batch, head_num = q.shape[0], q.shape[1]
    Lv = v_buffer.shape[-1]
    BLOCK_DV = triton.next_power_of_2(Lv)
    NUM_KV_SPLITS = num_kv_splits
    extra_kargs = {}
    grid = (batch, head_num)
    _fwd_kernel_stage2[grid](
        logits, o, b_seq_len, logits.stride(0), logits.stride(1), logits.stride(2), o.stride(0), o.stride(1),
        NUM_KV_SPLITS=NUM_KV_SPLITS, BLOCK_DV=BLOCK_DV, Lv=Lv, num_warps=4, num_stages=2, **extra_kargs,
    )


def decode_attention_fwd(q, k_buffer, v_buffer, o, req_to_token, b_req_idx, b_seq_len, attn_logits,
                         num_kv_splits, sm_scale, logit_cap=0.0):
    _decode_att_m_fwd(q, k_buffer, v_buffer, attn_logits, req_to_token, b_req_idx, b_seq_len,
                      num_kv_splits, sm_scale, logit_cap)
    _decode_softmax_reducev_fwd(attn_logits, q, o, v_buffer, b_seq_len, num_kv_splits)


if __name__ == "__main__":
    torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    B, H, KVH, D, SPLITS = 3, 8, 2, 64, 4
    seq = torch.tensor([33, 100, 7], dtype=torch.int32)
    pool = 512
    k_buffer, v_buffer = torch.randn(pool, KVH, D), torch.randn(pool, KVH, D)
    req_to_token = torch.randperm(pool)[: 4 * 128].view(4, 128).to(torch.int32)
    b_req_idx = torch.tensor([2, 0, 3], dtype=torch.int32)
    q = torch.randn(B, H, D)
    o = torch.empty_like(q)
    attn_logits = torch.empty(B, H, SPLITS, D + 1, dtype=torch.float32)
    sm = 1.0 / D ** 0.5
    decode_attention_fwd(q, k_buffer, v_buffer, o, req_to_token, b_req_idx, seq, attn_logits, SPLITS, sm)
    for b in range(B):
        idx = req_to_token[b_req_idx[b], : seq[b]].long()
        kk = k_buffer[idx].repeat_interleave(H // KVH, 1).transpose(0, 1)
        vv = v_buffer[idx].repeat_interleave(H // KVH, 1).transpose(0, 1)
        p = torch.softmax((q[b][:, None, :] @ kk.transpose(1, 2)) * sm, -1)
        torch.testing.assert_close(o[b], (p @ vv)[:, 0], atol=1e-4, rtol=1e-4)
    print("ok")
