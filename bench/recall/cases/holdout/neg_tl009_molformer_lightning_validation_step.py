# MoLFormer finetune/finetune_pubchem_light.py (trimmed): regression head fine-tuned with Lightning.
import argparse

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from fast_transformers.builders import TransformerEncoderBuilder
from fast_transformers.feature_maps import GeneralizedRandomFeatures
from fast_transformers.masking import LengthMask as LM
from torch import nn
from torch.utils.data import DataLoader

from tokenizer.tokenizer import MolTranBertTokenizer
from dataset import PropertyPredictionDataset


class Net(nn.Module):
    dims = [150, 50, 50, 2]

    def __init__(self, smiles_embed_dim, dims=dims, dropout=0.2):
        super().__init__()
        self.desc_skip_connection = True
        self.fcs = []
        self.fc1 = nn.Linear(smiles_embed_dim, smiles_embed_dim)
        self.dropout1 = nn.Dropout(dropout)
        self.relu1 = nn.GELU()
        self.fc2 = nn.Linear(smiles_embed_dim, smiles_embed_dim)
        self.dropout2 = nn.Dropout(dropout)
        self.relu2 = nn.GELU()
        self.final = nn.Linear(smiles_embed_dim, 1)

    def forward(self, smiles_emb):
        x_out = self.fc1(smiles_emb)
        x_out = self.dropout1(x_out)
        x_out = self.relu1(x_out)
        if self.desc_skip_connection is True:
            x_out = x_out + smiles_emb
        z = self.fc2(x_out)
        z = self.dropout2(z)
        z = self.relu2(z)
        if self.desc_skip_connection is True:
            z = self.final(z + x_out)
        else:
            z = self.final(z)
        return z


class LightningModule(pl.LightningModule):
    def __init__(self, config, tokenizer):
        super(LightningModule, self).__init__()
        self.save_hyperparameters(config)
        self.tokenizer = tokenizer
        n_vocab, d_emb = len(tokenizer.vocab), config.n_embd
        builder = TransformerEncoderBuilder.from_kwargs(
            n_layers=config.n_layer,
            n_heads=config.n_head,
            query_dimensions=config.n_embd // config.n_head,
            value_dimensions=config.n_embd // config.n_head,
            feed_forward_dimensions=config.n_embd,
            attention_type="linear",
            feature_map=GeneralizedRandomFeatures.factory(n_dims=config.num_feats),
            activation="gelu",
        )
        self.tok_emb = nn.Embedding(n_vocab, config.n_embd)
        self.drop = nn.Dropout(config.d_dropout)
        self.blocks = builder.get()
        self.net = Net(config.n_embd, dropout=config.dropout)
        self.loss = torch.nn.L1Loss()

    def embed(self, idx, mask):
        token_embeddings = self.tok_emb(idx)
        x = self.drop(token_embeddings)
        x = self.blocks(x, length_mask=LM(mask.sum(-1)))
        token_embeddings = x
        input_mask_expanded = mask.unsqueeze(-1).expand(token_embeddings.size()).float()
        sum_embeddings = torch.sum(token_embeddings * input_mask_expanded, 1)
        sum_mask = torch.clamp(input_mask_expanded.sum(1), min=1e-9)
        return sum_embeddings / sum_mask

    def training_step(self, batch, batch_idx):
        idx, mask, targets = batch
        loss_input = self.embed(idx, mask)
        pred = self.net.forward(loss_input).squeeze()
        loss = self.loss(pred, targets)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, val_batch, batch_idx, dataset_idx=0):
        idx, mask, targets = val_batch
        loss_input = self.embed(idx, mask)
        pred = self.net.forward(loss_input).squeeze()
        loss = self.loss(pred, targets)
        self.log("val_loss", loss, sync_dist=True)
        return {"val_loss": loss, "pred": pred.detach(), "target": targets.detach()}

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr_start, betas=(0.9, 0.99))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_embd", type=int, default=768)
    parser.add_argument("--n_layer", type=int, default=12)
    parser.add_argument("--n_head", type=int, default=12)
    parser.add_argument("--num_feats", type=int, default=32)
    parser.add_argument("--d_dropout", type=float, default=0.1)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--lr_start", type=float, default=3e-5)
    parser.add_argument("--max_epochs", type=int, default=500)
    config = parser.parse_args()

    tokenizer = MolTranBertTokenizer("bert_vocab.txt")
    train_loader = DataLoader(PropertyPredictionDataset("train.csv", tokenizer), batch_size=128, shuffle=True, num_workers=8)
    val_loader = DataLoader(PropertyPredictionDataset("valid.csv", tokenizer), batch_size=128, num_workers=8)

    model = LightningModule(config, tokenizer)
    trainer = pl.Trainer(max_epochs=config.max_epochs, accelerator="gpu", devices=1, num_sanity_val_steps=0)
    trainer.fit(model, train_loader, val_loader)


if __name__ == "__main__":
    main()
