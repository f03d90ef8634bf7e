# SPDX-License-Identifier: Apache-2.0
"""Multi-modal encoder attention (reduced): the ViT towers of the vision-language models call
MMEncoderAttention with (batch, seq, heads * head_size) query, key and value."""
from collections.abc import Callable

import einops
import torch
import torch.nn as nn
import torch.nn.functional as F

from vllm.attention.backends.registry import AttentionBackendEnum
from vllm.model_executor.custom_op import CustomOp
from vllm.model_executor.models.vision import get_vit_attn_backend


def maybe_get_vit_flash_attn_backend(attn_backend: AttentionBackendEnum | None) -> Callable | None:
    if attn_backend == AttentionBackendEnum.FLASH_ATTN:
        from flash_attn import flash_attn_varlen_func
        return flash_attn_varlen_func
    return None


@CustomOp.register("mm_encoder_attn")
class MMEncoderAttention(CustomOp):
    """Multi-headed attention without any cache, used for multimodal encoder."""

    def __init__(self, num_heads: int, head_size: int, scale: float | None = None,
                 num_kv_heads: int | None = None, prefix: str = "") -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = head_size ** -0.5 if scale is None else scale
        self.num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        assert self.num_heads % self.num_kv_heads == 0
        self.num_queries_per_kv = self.num_heads // self.num_kv_heads
        self.attn_backend = get_vit_attn_backend(head_size=head_size, dtype=torch.get_default_dtype())
        self.flash_attn_varlen_func = maybe_get_vit_flash_attn_backend(self.attn_backend)

    def _forward_sdpa(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        bsz, q_len = query.size()[:2]
        kv_len = key.size(1)

        query = query.view(bsz, q_len, self.num_heads, self.head_size)
        key = key.view(bsz, kv_len, self.num_kv_heads, self.head_size)
        value = value.view(bsz, kv_len, self.num_kv_heads, self.head_size)

        if (num_repeat := self.num_queries_per_kv) > 1:
            key = torch.repeat_interleave(key, num_repeat, dim=2)
            value = torch.repeat_interleave(value, num_repeat, dim=2)

        query, key, value = (x.transpose(1, 2) for x in (query, key, value))
        out = F.scaled_dot_product_attention(query, key, value, scale=self.scale)
        output = out.transpose(1, 2)
        return output.view(bsz, q_len, -1)

    def _forward_fa(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                    cu_seqlens: torch.Tensor, max_seqlen: int) -> torch.Tensor:
        bsz, q_len = query.size()[:2]
        q, k, v = (einops.rearrange(x, "b s (h d) -> (b s) h d", d=self.head_size)
                   for x in (query, key, value))
        output = self.flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu_seqlens, cu_seqlens_k=cu_seqlens,
                                             max_seqlen_q=max_seqlen, max_seqlen_k=max_seqlen,
                                             dropout_p=0.0, causal=False, softmax_scale=self.scale)
        output = einops.rearrange(output, "(b s) h d -> b s h d", b=bsz)
        return output.view(bsz, q_len, -1)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                cu_seqlens: torch.Tensor | None = None, max_seqlen: int | None = None) -> torch.Tensor:
        if self.flash_attn_varlen_func is not None and cu_seqlens is not None:
            return self._forward_fa(query, key, value, cu_seqlens, max_seqlen)
        return self._forward_sdpa(query, key, value)


class InternSdpaAttention(nn.Module):
    """InternViT's attention, reduced to the projections around MMEncoderAttention."""

    def __init__(self, embed_dim: int, num_heads: int) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.attn = MMEncoderAttention(num_heads, self.head_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        out = self.attn(q, k, v)
        return self.proj(out)
