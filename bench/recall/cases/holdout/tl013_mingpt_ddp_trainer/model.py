from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    n_layer: int = None
    n_head: int = None
    n_embd: int = None
    vocab_size: int = 50257
    block_size: int = 1024
    embd_pdrop: float = 0.1
    attn_pdrop: float = 0.1


@dataclass
class OptimizerConfig:
    learning_rate: float = 3e-4
    weight_decay: float = 0.1


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.drop = nn.Dropout(config.embd_pdrop)
        layer = nn.TransformerEncoderLayer(config.n_embd, config.n_head, dropout=config.attn_pdrop, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, config.n_layer)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        x = self.drop(self.tok_emb(idx) + self.pos_emb[:, :t, :])
        logits = self.head(self.blocks(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def create_optimizer(model: torch.nn.Module, opt_config: OptimizerConfig):
    return torch.optim.AdamW(model.parameters(), lr=opt_config.learning_rate, weight_decay=opt_config.weight_decay)
