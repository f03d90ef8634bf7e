import os.path as osp

import torch
import torch.nn.functional as F
from pytorch_lightning import LightningDataModule, LightningModule, Trainer, seed_everything
from pytorch_lightning.callbacks import ModelCheckpoint
from torchmetrics import Accuracy

import torch_geometric.transforms as T
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GIN, MLP, global_add_pool


class IMDBBinary(LightningDataModule):
    def __init__(self, root):
        super().__init__()
        self.root = root
        self.transform = T.OneHotDegree(135)

    def prepare_data(self):
        TUDataset(self.root, name='IMDB-BINARY', pre_transform=self.transform)

    def setup(self, stage=None):
        dataset = TUDataset(self.root, name='IMDB-BINARY', pre_transform=self.transform).shuffle()
        self.test_dataset = dataset[:len(dataset) // 10]
        self.val_dataset = dataset[len(dataset) // 10:2 * len(dataset) // 10]
        self.train_dataset = dataset[2 * len(dataset) // 10:]

    def train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=64, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_dataset, batch_size=64)


class Model(LightningModule):
    def __init__(self, in_channels, out_channels, hidden_channels=64, num_layers=3, dropout=0.5):
        super().__init__()
        self.gnn = GIN(in_channels, hidden_channels, num_layers, dropout=dropout, jk='cat')
        self.classifier = MLP([hidden_channels, hidden_channels, out_channels], batch_norm=True,
                              dropout=dropout)
        self.train_acc = Accuracy()
        self.val_acc = Accuracy()

    def forward(self, x, edge_index, batch):
        x = self.gnn(x, edge_index)
        x = global_add_pool(x, batch)
        x = self.classifier(x)
        return x

    def training_step(self, data, batch_idx):
        y_hat = self(data.x, data.edge_index, data.batch)
        train_loss = F.cross_entropy(y_hat, data.y)
        self.train_acc(y_hat.softmax(dim=-1), data.y)
        self.log('train_acc', self.train_acc, prog_bar=True, on_step=False, on_epoch=True)
        return train_loss

    def validation_step(self, data, batch_idx):
        y_hat = self(data.x, data.edge_index, data.batch)
        self.val_acc(y_hat.softmax(dim=-1), data.y)
        self.log('val_acc', self.val_acc, prog_bar=True, on_step=False, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


def main():
    seed_everything(42)
    root = osp.join('data', 'TUDataset')
    datamodule = IMDBBinary(root)
    model = Model(136, 2)
    checkpoint_callback = ModelCheckpoint(monitor='val_acc', save_top_k=1)
    trainer = Trainer(gpus=1, max_epochs=20, callbacks=[checkpoint_callback])
    trainer.fit(model, datamodule)


if __name__ == '__main__':
    main()
