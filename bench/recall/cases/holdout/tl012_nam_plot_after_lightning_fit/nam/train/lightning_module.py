import pytorch_lightning as pl
import torch
import torch.nn as nn

from nam.models import WaveNet


class LightningModule(pl.LightningModule):
    """Trains a NAM network on (input, target) audio segments."""

    def __init__(self, net, optimizer_config=None, scheduler_config=None):
        super().__init__()
        self._net = net
        self._optimizer_config = {} if optimizer_config is None else optimizer_config
        self._scheduler_config = scheduler_config

    @classmethod
    def init_from_config(cls, config):
        net = WaveNet.init_from_config(config["net"]["config"])
        return cls(net, optimizer_config=config.get("optimizer"), scheduler_config=config.get("lr_scheduler"))

    @classmethod
    def parse_config(cls, config):
        return {
            "net": WaveNet.init_from_config(config["net"]["config"]),
            "optimizer_config": config.get("optimizer"),
            "scheduler_config": config.get("lr_scheduler"),
        }

    @property
    def net(self):
        return self._net

    def forward(self, x):
        return self._net(x)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), **self._optimizer_config)
        if self._scheduler_config is None:
            return optimizer
        lr_scheduler = getattr(torch.optim.lr_scheduler, self._scheduler_config["class"])(
            optimizer, **self._scheduler_config["kwargs"])
        return {"optimizer": optimizer, "lr_scheduler": lr_scheduler}

    def _shared_step(self, batch):
        x, y = batch
        preds = self(x)
        return nn.functional.mse_loss(preds, y[..., -preds.shape[-1]:])

    def training_step(self, batch, batch_idx):
        loss = self._shared_step(batch)
        self.log("train_loss", loss, prog_bar=True, logger=True)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = self._shared_step(batch)
        self.log("val_loss", loss)
        return loss
