import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class T5MultiheadAttention(nn.MultiheadAttention):
    def __init__(self, embed_dim: int, num_heads: int, is_decoder: bool = False, dropout: float = 0.0,
                 bias: bool = False, qkv_dim: int = 64, compute_relative_attention_bias: bool = False,
                 relative_attention_num_buckets: int = 32, relative_attention_max_distance: int = 128,
                 device: Optional[torch.device] = None, dtype=None) -> None:
        super().__init__(embed_dim, num_heads, dropout, bias, False, False, qkv_dim, qkv_dim, True, device, dtype)
        self.is_decoder = is_decoder
        self.inner_dim = qkv_dim * num_heads
        self.q_proj_weight = nn.Parameter(torch.empty((self.inner_dim, embed_dim)))
        self.k_proj_weight = nn.Parameter(torch.empty((self.inner_dim, embed_dim)))
        self.v_proj_weight = nn.Parameter(torch.empty((self.inner_dim, embed_dim)))
        self.out_proj = nn.Linear(self.inner_dim, embed_dim, bias=bias)
        self.compute_relative_attention_bias = compute_relative_attention_bias
        self.relative_attention_num_buckets = relative_attention_num_buckets
        self.relative_attention_max_distance = relative_attention_max_distance
        if self.compute_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(relative_attention_num_buckets, num_heads)
        else:
            self.relative_attention_bias = None

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Optional[Tensor] = None, attn_mask: Optional[Tensor] = None,
                position_bias: Optional[Tensor] = None) -> Tuple[Tensor, Optional[Tensor]]:
        bsz, tgt_len, _ = query.shape
        src_len = key.shape[1]
        q = F.linear(query, self.q_proj_weight).view(bsz, tgt_len, self.num_heads, -1).transpose(1, 2)
        k = F.linear(key, self.k_proj_weight).view(bsz, src_len, self.num_heads, -1).transpose(1, 2)
        v = F.linear(value, self.v_proj_weight).view(bsz, src_len, self.num_heads, -1).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(3, 2))
        if position_bias is None:
            position_bias = self._compute_bias(tgt_len, src_len, bidirectional=not self.is_decoder)
        scores = scores + position_bias
        if attn_mask is not None:
            scores = scores + attn_mask
        attn = F.dropout(F.softmax(scores.float(), dim=-1).type_as(scores), p=self.dropout,
                         training=self.training)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(bsz, tgt_len, self.inner_dim)
        return self.out_proj(out), position_bias

    def _compute_bias(self, query_length: int, key_length: int, bidirectional: bool = True) -> Tensor:
        assert self.relative_attention_bias is not None
        device = self.relative_attention_bias.weight.device
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position
        relative_position_bucket = self._relative_position_bucket(
            relative_position,
            bidirectional=bidirectional,
            num_buckets=self.relative_attention_num_buckets,
            max_distance=self.relative_attention_max_distance,
        )
        values = self.relative_attention_bias(relative_position_bucket)
        return values.permute([2, 0, 1]).unsqueeze(0)

    def _relative_position_bucket(self, relative_position: Tensor, bidirectional: bool = True,
                                  num_buckets: int = 32, max_distance: int = 128) -> Tensor:
        relative_buckets = torch.zeros(relative_position.shape, dtype=torch.long)
        if bidirectional:
            num_buckets = num_buckets // 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))

        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        )
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets
