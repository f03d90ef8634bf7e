import lightning.pytorch as pl
import torch
import torch.nn.functional as F

from nwm.models import WorldModel


class WorldModelModule(pl.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.save_hyperparameters()
        self.cfg = cfg
        self.model = WorldModel(**cfg.model)

    def training_step(self, batch, batch_idx):
        obs, actions, next_obs = batch["obs"], batch["actions"], batch["next_obs"]
        pred = self.model(obs, actions)
        loss = F.mse_loss(pred, next_obs)
        if self.cfg.train.gradient_clip_norm is not None:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.train.gradient_clip_norm)
            self.log("train/gradient_norm", grad_norm)
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        pred = self.model(batch["obs"], batch["actions"])
        self.log("val/loss", F.mse_loss(pred, batch["next_obs"]), sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.cfg.train.lr,
                                      weight_decay=self.cfg.train.weight_decay)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.cfg.train.max_steps)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def main(cfg, datamodule):
    trainer = pl.Trainer(max_steps=cfg.train.max_steps, accelerator="gpu", devices=cfg.train.devices,
                         accumulate_grad_batches=cfg.train.gradient_accumulation)
    trainer.fit(WorldModelModule(cfg), datamodule=datamodule)
