"""Minimal implementation of BlipVisionModel intended to be only used within a vision language model (reduced)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from vllm.platforms import current_platform

USE_XFORMERS_OPS = current_platform.is_cuda()


class BlipAttention(nn.Module):
    """Multi-headed attention from 'Attention Is All You Need' paper"""

    def __init__(self, hidden_size: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        self.embed_dim = hidden_size
        self.num_heads = num_heads
        self.head_dim = self.embed_dim // self.num_heads
        self.scale = self.head_dim ** -0.5
        self.dropout = dropout
        self.qkv = nn.Linear(self.embed_dim, 3 * self.embed_dim)
        self.projection = nn.Linear(self.embed_dim, self.embed_dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """Input shape: Batch x Time x Channel"""
        bsz, tgt_len, _ = hidden_states.size()

        qkv_states = self.qkv(hidden_states)
        query_states, key_states, value_states = qkv_states.chunk(3, dim=-1)
        query_states = query_states.view(bsz, tgt_len, self.num_heads, self.head_dim)
        key_states = key_states.view(bsz, tgt_len, self.num_heads, self.head_dim)
        value_states = value_states.view(bsz, tgt_len, self.num_heads, self.head_dim)

        if USE_XFORMERS_OPS:
            from xformers import ops as xops
            out = xops.memory_efficient_attention_forward(query_states, key_states, value_states,
                                                          p=self.dropout, scale=self.scale)
        else:
            query_states = query_states.transpose(1, 2)
            key_states = key_states.transpose(1, 2)
            value_states = value_states.transpose(1, 2)
            out = F.scaled_dot_product_attention(query_states, key_states, value_states,
                                                 dropout_p=self.dropout, scale=self.scale)
            out = out.transpose(1, 2)
        out = out.view(bsz, tgt_len, -1)
        attn_output = self.projection(out)
        return attn_output


class BlipMLP(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int):
        super().__init__()
        self.fc1 = nn.Linear(hidden_size, intermediate_size)
        self.fc2 = nn.Linear(intermediate_size, hidden_size)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(hidden_states)))


class BlipEncoderLayer(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int, intermediate_size: int, eps: float = 1e-6):
        super().__init__()
        self.self_attn = BlipAttention(hidden_size, num_heads)
        self.layer_norm1 = nn.LayerNorm(hidden_size, eps=eps)
        self.mlp = BlipMLP(hidden_size, intermediate_size)
        self.layer_norm2 = nn.LayerNorm(hidden_size, eps=eps)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.layer_norm1(hidden_states)
        hidden_states = self.self_attn(hidden_states=hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.layer_norm2(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states
