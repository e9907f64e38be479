"""SGLang-style extend (prefill with a cached prefix) attention: the new tokens of each request are
packed (`qo_indptr`); their prefix keys come from the KV pool through `kv_indptr`/`kv_indices`, the
new keys from `k_extend`; stage 1 over the prefix, stage 2 over the new tokens with a causal mask.
The launching function takes a `max_len_extend` and derives block sizes from the head dim."""
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel(
    Q_Extend, K_Extend, V_Extend, O_Extend, K_Buffer, V_Buffer, qo_indptr, kv_indptr, kv_indices,
    sm_scale, kv_group_num,
    stride_qbs, stride_qh, stride_kbs, stride_kh, stride_vbs, stride_vh, stride_obs, stride_oh,
    stride_buf_kbs, stride_buf_kh, stride_buf_vbs, stride_buf_vh,
    logit_cap: tl.constexpr, Lq: tl.constexpr, Lv: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr, BLOCK_DV: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
):
    cur_seq = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_block_m = tl.program_id(2)
    cur_kv_head = cur_head // kv_group_num

    cur_seq_extend_start_idx = tl.load(qo_indptr + cur_seq)
    cur_seq_len_extend = tl.load(qo_indptr + cur_seq + 1) - cur_seq_extend_start_idx
    cur_seq_kv_start_idx = tl.load(kv_indptr + cur_seq)
    cur_seq_len_prefix = tl.load(kv_indptr + cur_seq + 1) - cur_seq_kv_start_idx

    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_dv = tl.arange(0, BLOCK_DV)
    offs_m = tl.arange(0, BLOCK_M)
    mask_m = (cur_block_m * BLOCK_M + offs_m) < cur_seq_len_extend
    mask_d = offs_d < Lq
    mask_dv = offs_dv < Lv

    offs_q = ((cur_seq_extend_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_qbs
              + cur_head * stride_qh + offs_d[None, :])
    q = tl.load(Q_Extend + offs_q, mask=(mask_m[:, None]) & (mask_d[None, :]), other=0.0)

    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)
    deno = tl.zeros([BLOCK_M], dtype=tl.float32)
    e_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")

    for start_n in range(0, cur_seq_len_prefix, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        mask_n = (start_n + offs_n) < cur_seq_len_prefix
        offs_kv_loc = tl.load(kv_indices + cur_seq_kv_start_idx + start_n + offs_n, mask=mask_n, other=0)
        offs_buf_k = offs_kv_loc[None, :] * stride_buf_kbs + cur_kv_head * stride_buf_kh + offs_d[:, None]
        k = tl.load(K_Buffer + offs_buf_k, mask=(mask_n[None, :]) & (mask_d[:, None]), other=0.0)
        qk = tl.dot(q.to(k.dtype), k)
        qk *= sm_scale
        if logit_cap > 0:
            qk = logit_cap * (2 * tl.sigmoid(2 * qk / logit_cap) - 1)
        qk = tl.where(mask_m[:, None] & mask_n[None, :], qk, float("-inf"))
        n_e_max = tl.maximum(tl.max(qk, 1), e_max)
        re_scale = tl.exp(e_max - n_e_max)
        p = tl.exp(qk - n_e_max[:, None])
        deno = deno * re_scale + tl.sum(p, 1)
        offs_buf_v = offs_kv_loc[:, None] * stride_buf_vbs + cur_kv_head * stride_buf_vh + offs_dv[None, :]
        v = tl.load(V_Buffer + offs_buf_v, mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
        p = p.to(v.dtype)
        acc = acc * re_scale[:, None] + tl.dot(p, v)
        e_max = n_e_max

    cur_block_m_end = tl.minimum(cur_seq_len_extend, (cur_block_m + 1) * BLOCK_M) if IS_CAUSAL else cur_seq_len_extend
    for start_n in range(0, cur_block_m_end, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        mask_n = (start_n + offs_n) < cur_block_m_end
        offs_k = ((cur_seq_extend_start_idx + start_n + offs_n[None, :]) * stride_kbs
                  + cur_kv_head * stride_kh + offs_d[:, None])
        k = tl.load(K_Extend + offs_k, mask=(mask_n[None, :]) & (mask_d[:, None]), other=0.0)
        qk = tl.dot(q, k, out_dtype=tl.float32)
        qk *= sm_scale
        if logit_cap > 0:
            qk = logit_cap * (2 * tl.sigmoid(2 * qk / logit_cap) - 1)
        if IS_CAUSAL:
            mask_causual = (cur_block_m * BLOCK_M + offs_m[:, None]) >= (start_n + offs_n[None, :])
            mask_causual &= mask_m[:, None] & mask_n[None, :]
        else:
            mask_causual = mask_m[:, None] & mask_n[None, :]
        qk = tl.where(mask_causual, qk, float("-inf"))
        n_e_max = tl.maximum(tl.max(qk, 1), e_max)
        re_scale = tl.exp(e_max - n_e_max)
        p = tl.exp(qk - n_e_max[:, None])
        deno = deno * re_scale + tl.sum(p, 1)
        offs_v = ((cur_seq_extend_start_idx + start_n + offs_n[:, None]) * stride_vbs
                  + cur_kv_head * stride_vh + offs_dv[None, :])
        v = tl.load(V_Extend + offs_v, mask=mask_n[:, None] & mask_dv[None, :], other=0.0)
        p = p.to(v.dtype)
        acc = acc * re_scale[:, None] + tl.dot(p, v)
        e_max = n_e_max

    offs_o = ((cur_seq_extend_start_idx + cur_block_m * BLOCK_M + offs_m[:, None]) * stride_obs
              + cur_head * stride_oh + offs_dv[None, :])
    tl.store(O_Extend + offs_o, acc / deno[:, None], mask=mask_m[:, None] & mask_dv[None, :])


def extend_attention_fwd(q_extend, k_extend, v_extend, o_extend, k_buffer, v_buffer, qo_indptr, kv_indptr,
                         kv_indices, max_len_extend, sm_scale=None, logit_cap=0.0, is_causal=True):
    Lq, Lk, Lv = q_extend.shape[-1], k_extend.shape[-1], v_extend.shape[-1]
    BLOCK_DMODEL = triton.next_power_of_2(Lq)
    BLOCK_DV = triton.next_power_of_2(Lv)
    BLOCK_M, BLOCK_N = (32, 32) if Lq <= 128 else (16, 16)
    num_warps = 4 if Lk <= 64 else 8
    sm_scale = sm_scale or 1.0 / (Lq ** 0.5)
    batch_size, head_num = qo_indptr.shape[0] - 1, q_extend.shape[1]
    kv_group_num = q_extend.shape[1] // k_extend.shape[1]
    grid = (batch_size, head_num, triton.cdiv(max_len_extend, BLOCK_M))
    _fwd_kernel[grid](
        q_extend, k_extend, v_extend, o_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices,
        sm_scale, kv_group_num,
        q_extend.stride(0), q_extend.stride(1), k_extend.stride(0), k_extend.stride(1),
        v_extend.stride(0), v_extend.stride(1), o_extend.stride(0), o_extend.stride(1),
        k_buffer.stride(0), k_buffer.stride(1), v_buffer.stride(0), v_buffer.stride(1),
        logit_cap=logit_cap, Lq=Lq, Lv=Lv, BLOCK_DMODEL=BLOCK_DMODEL, BLOCK_DV=BLOCK_DV,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, IS_CAUSAL=is_causal, num_warps=num_warps, num_stages=1,
    )


if __name__ == "__main__":
    torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    H, KVH, D, POOL = 4, 2, 32, 256
    prefix = [10, 0, 23]
    extend = [7, 20, 3]
    k_buffer, v_buffer = torch.randn(POOL, KVH, D), torch.randn(POOL, KVH, D)
    kv_indices = torch.randperm(POOL)[: sum(prefix)].to(torch.int32)
    kv_indptr = torch.tensor([0] + list(torch.tensor(prefix).cumsum(0)), dtype=torch.int32)
    qo_indptr = torch.tensor([0] + list(torch.tensor(extend).cumsum(0)), dtype=torch.int32)
    T = sum(extend)
    q, k, v = torch.randn(T, H, D), torch.randn(T, KVH, D), torch.randn(T, KVH, D)
    o = torch.empty_like(q)
    extend_attention_fwd(q, k, v, o, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, max(extend))
    g = H // KVH
    for i in range(3):
        idx = kv_indices[kv_indptr[i]: kv_indptr[i + 1]].long()
        s, e = qo_indptr[i], qo_indptr[i + 1]
        kk = torch.cat([k_buffer[idx], k[s:e]]).repeat_interleave(g, 1).transpose(0, 1)
        vv = torch.cat([v_buffer[idx], v[s:e]]).repeat_interleave(g, 1).transpose(0, 1)
        qq = q[s:e].transpose(0, 1)
        P, E = prefix[i], extend[i]
        mask = torch.ones(E, P + E, dtype=torch.bool)
        mask[:, P:] = torch.ones(E, E, dtype=torch.bool).tril()
        ref = torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, attn_mask=mask).transpose(0, 1)
        torch.testing.assert_close(o[s:e], ref, atol=1e-2, rtol=1e-2)
    print("ok")
