"""Prefill attention in the lightllm / vLLM `context_attention_fwd` style: packed tokens, per-sequence
start offsets `b_start_loc` and lengths `b_seq_len`, grid (batch, head, cdiv(max_input_len, BLOCK)),
GQA via kv_group_num, causal, output preallocated by the caller."""
import torch
import triton
import triton.language as tl

if triton.__version__ >= "2.1.0":
    @triton.jit
    def _fwd_kernel(
        Q, K, V, sm_scale, B_Start_Loc, B_Seqlen, Out,
        stride_qbs, stride_qh, stride_kbs, stride_kh, stride_vbs, stride_vh, stride_obs, stride_oh,
        kv_group_num: tl.constexpr,
        BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
        IS_CAUSAL: tl.constexpr, Lk: tl.constexpr,
    ):
        cur_batch = tl.program_id(0)
        cur_head = tl.program_id(1)
        start_m = tl.program_id(2)
        cur_kv_head = cur_head // kv_group_num

        cur_batch_seq_len = tl.load(B_Seqlen + cur_batch)
        cur_batch_in_all_start_index = tl.load(B_Start_Loc + cur_batch)

        block_start_loc = BLOCK_M * start_m

        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, BLOCK_DMODEL)
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        off_q = (cur_batch_in_all_start_index + offs_m[:, None]) * stride_qbs + cur_head * stride_qh + offs_d[None, :]
        off_k = offs_n[None, :] * stride_kbs + cur_kv_head * stride_kh + offs_d[:, None]
        off_v = offs_n[:, None] * stride_vbs + cur_kv_head * stride_vh + offs_d[None, :]
        mask_d = offs_d < Lk

        q = tl.load(Q + off_q, mask=(offs_m[:, None] < cur_batch_seq_len) & mask_d[None, :], other=0.0)

        k_ptrs = K + off_k
        v_ptrs = V + off_v

        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)

        block_mask = tl.where(block_start_loc < cur_batch_seq_len, 1, 0)
        end_n = cur_batch_seq_len if not IS_CAUSAL else tl.minimum((start_m + 1) * BLOCK_M, cur_batch_seq_len)
        for start_n in range(0, block_mask * end_n, BLOCK_N):
            start_n = tl.multiple_of(start_n, BLOCK_N)
            k = tl.load(k_ptrs + (cur_batch_in_all_start_index + start_n) * stride_kbs,
                        mask=((start_n + offs_n[None, :]) < cur_batch_seq_len) & mask_d[:, None], other=0.0)
            qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            qk += tl.dot(q, k)
            qk *= sm_scale
            if IS_CAUSAL:
                qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
            else:
                qk = tl.where((start_n + offs_n[None, :]) < cur_batch_seq_len, qk, float("-inf"))

            m_ij = tl.max(qk, 1)
            p = tl.exp(qk - m_ij[:, None])
            l_ij = tl.sum(p, 1)
            m_i_new = tl.maximum(m_i, m_ij)
            alpha = tl.exp(m_i - m_i_new)
            beta = tl.exp(m_ij - m_i_new)
            l_i_new = alpha * l_i + beta * l_ij
            p_scale = beta / l_i_new
            p = p * p_scale[:, None]
            acc_scale = l_i / l_i_new * alpha
            acc = acc * acc_scale[:, None]
            v = tl.load(v_ptrs + (cur_batch_in_all_start_index + start_n) * stride_vbs,
                        mask=((start_n + offs_n[:, None]) < cur_batch_seq_len) & mask_d[None, :], other=0.0)
            p = p.to(v.dtype)
            acc += tl.dot(p, v)
            l_i = l_i_new
            m_i = m_i_new
        off_o = (cur_batch_in_all_start_index + offs_m[:, None]) * stride_obs + cur_head * stride_oh + offs_d[None, :]
        out_ptrs = Out + off_o
        tl.store(out_ptrs, acc, mask=(offs_m[:, None] < cur_batch_seq_len) & mask_d[None, :])


@torch.no_grad()
def context_attention_fwd(q, k, v, o, b_start_loc, b_seq_len, max_input_len, is_causal=True):
    BLOCK = 32
    Lq, Lk, Lv = q.shape[-1], k.shape[-1], v.shape[-1]
    assert Lq == Lk and Lk == Lv
    sm_scale = 1.0 / (Lq ** 0.5)
    batch, head = b_seq_len.shape[0], q.shape[1]
    kv_group_num = q.shape[1] // k.shape[1]
    grid = (batch, head, triton.cdiv(max_input_len, BLOCK))
    num_warps = 4 if Lk <= 64 else 8
    _fwd_kernel[grid](
        q, k, v, sm_scale, b_start_loc, b_seq_len, o,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1), o.stride(0), o.stride(1),
        kv_group_num=kv_group_num, BLOCK_M=BLOCK, BLOCK_DMODEL=triton.next_power_of_2(Lk), BLOCK_N=BLOCK,
        IS_CAUSAL=is_causal, Lk=Lk, num_warps=num_warps, num_stages=1,
    )


def _ref(q, k, v, b_start_loc, b_seq_len):
    out = torch.empty_like(q)
    g = q.shape[1] // k.shape[1]
    for s, n in zip(b_start_loc.tolist(), b_seq_len.tolist()):
        qq = q[s:s + n].transpose(0, 1)
        kk = k[s:s + n].repeat_interleave(g, 1).transpose(0, 1)
        vv = v[s:s + n].repeat_interleave(g, 1).transpose(0, 1)
        out[s:s + n] = torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=True).transpose(0, 1)
    return out


if __name__ == "__main__":
    torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    seqs = torch.tensor([17, 40, 5], dtype=torch.int32)
    start = torch.zeros_like(seqs)
    start[1:] = torch.cumsum(seqs, 0)[:-1]
    T, H, KVH, D = int(seqs.sum()), 4, 2, 48
    q, k, v = torch.randn(T, H, D), torch.randn(T, KVH, D), torch.randn(T, KVH, D)
    o = torch.empty_like(q)
    context_attention_fwd(q, k, v, o, start, seqs, int(seqs.max()))
    torch.testing.assert_close(o, _ref(q, k, v, start, seqs), atol=2e-3, rtol=2e-3)
    print("ok")
