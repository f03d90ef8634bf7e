# Reconstructed: a LightningModule whose train_dataloader builds its own DistributedSampler
# (the thread links the pytorch and transformers reports of samplers that never reshuffle).
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
import pytorch_lightning as pl


class LitClassifier(pl.LightningModule):
    def __init__(self, train_dataset, val_dataset, hidden_dim=128, lr=1e-3, batch_size=64):
        super().__init__()
        self.train_dataset = train_dataset
        self.val_dataset = val_dataset
        self.lr = lr
        self.batch_size = batch_size
        self.l1 = nn.Linear(28 * 28, hidden_dim)
        self.dropout = nn.Dropout(0.2)
        self.l2 = nn.Linear(hidden_dim, 10)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        x = self.dropout(torch.relu(self.l1(x)))
        return self.l2(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log('train_loss', loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log('val_loss', loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def train_dataloader(self):
        sampler = DistributedSampler(self.train_dataset, num_replicas=dist.get_world_size(),
                                     rank=dist.get_rank(), shuffle=True)
        return DataLoader(self.train_dataset, batch_size=self.batch_size, sampler=sampler,
                          num_workers=4, pin_memory=True)

    def val_dataloader(self):
        return DataLoader(self.val_dataset, batch_size=self.batch_size, num_workers=4, pin_memory=True)
