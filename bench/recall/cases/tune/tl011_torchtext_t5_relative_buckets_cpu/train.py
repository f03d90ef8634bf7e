import pytorch_lightning as pl
import torch
import torch.nn as nn

from torchtext.prototype.models.t5.modules import T5MultiheadAttention


class T5EncoderLayerLM(pl.LightningModule):
    def __init__(self, vocab_size=32128, d_model=512, nhead=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.attn = T5MultiheadAttention(d_model, nhead, compute_relative_attention_bias=True)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        x = self.embed(tokens)
        x, _ = self.attn(x, x, x)
        return self.head(x)

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self(tokens)
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    from data import build_loaders

    train_loader = build_loaders(batch_size=16)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=1)
    trainer.fit(T5EncoderLayerLM(), train_loader)
