import torch
from pytorch_lightning import LightningModule
from torch import nn
from transformers import AutoModel

from npairs_loss import NPairsLoss


class JointEncoder(LightningModule):
    """Encodes code snippets (x1) and their descriptions (x2) into one embedding space."""

    def __init__(self, hparams):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.x1_encoder = AutoModel.from_pretrained(hparams.model_name)
        self.x2_encoder = AutoModel.from_pretrained(hparams.model_name)
        self.x1_proj = nn.Linear(self.x1_encoder.config.hidden_size, hparams.hidden_size)
        self.x2_proj = nn.Linear(self.x2_encoder.config.hidden_size, hparams.hidden_size)
        self.loss_fn = NPairsLoss()

    def forward(self, x1, x2):
        r1 = self.x1_proj(self.x1_encoder(**x1).last_hidden_state[:, 0])
        r2 = self.x2_proj(self.x2_encoder(**x2).last_hidden_state[:, 0])
        return r1, r2

    def training_step(self, batch, batch_idx):
        x1, x2 = batch["x1"], batch["x2"]
        predict = self(x1, x2)
        target = torch.arange(x1["input_ids"].size()[0])
        loss = self.loss_fn(predict, target)
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        x1, x2 = batch["x1"], batch["x2"]
        r1, r2 = self(x1, x2)
        target = torch.arange(x1["input_ids"].size()[0], device=r1.device)
        loss = self.loss_fn((r1, r2), target)
        return {"val_loss": loss}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
