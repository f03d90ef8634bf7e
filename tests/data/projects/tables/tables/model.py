from torch import nn

from .encodings import causal_mask, sinusoid_table


class Encoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.dim = dim
        self.embed = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 4, batch_first=True)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + sinusoid_table(tokens.size(1), self.dim)
        mask = causal_mask(tokens.size(1)).to(x.device)
        return self.layer(x, src_mask=mask)
