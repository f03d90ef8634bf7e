import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model=256, num_heads=8):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        batch_size, seq_length, _ = x.size()
        return x.view(batch_size, seq_length, self.num_heads, self.d_k).permute(0, 2, 1, 3)

    def combine_heads(self, x):
        batch_size, _, seq_length, _ = x.size()
        return x.permute(0, 2, 1, 3).view(batch_size, seq_length, self.d_model)

    def scaled_dot_product_attention(self, Q, K, V, mask=None):
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        probs = F.softmax(scores, dim=-1)
        return torch.matmul(probs, V)

    def forward(self, Q, K, V, mask=None):
        Q = self.split_heads(self.W_q(Q))
        K = self.split_heads(self.W_k(K))
        V = self.split_heads(self.W_v(V))
        attn_output = self.scaled_dot_product_attention(Q, K, V, mask)
        return self.W_o(self.combine_heads(attn_output))


class Decoder(nn.Module):
    def __init__(self, vocab_size=100, d_model=256, num_heads=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.out = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, memory):
        x = self.embed(tokens)
        x = self.attn(x, memory, memory)
        return self.out(x)


if __name__ == "__main__":
    model = Decoder()
    tokens = torch.randint(0, 100, (2, 5))
    memory = torch.randn(2, 10, 256)
    logits = model(tokens, memory)
    loss = F.cross_entropy(logits.view(-1, 100), torch.randint(0, 100, (10,)))
    loss.backward()
