import time

import lightning as L
import torch
from lightning.pytorch.callbacks import Callback


class GenerationSpeedLogger(Callback):
    """Logs how long predict batches and epochs take, for backend comparisons."""

    def __init__(self):
        super().__init__()
        self._batch_start = None
        self._epoch_start = None
        self.batch_times = []

    def on_predict_epoch_start(self, trainer, pl_module):
        self._epoch_start = time.perf_counter()

    def on_predict_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx=0):
        self._batch_start = time.perf_counter()

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        elapsed = time.perf_counter() - self._batch_start
        self.batch_times.append(elapsed)
        pl_module.log("predict/batch_time_sec", elapsed)

    def on_predict_epoch_end(self, trainer, pl_module):
        elapsed = time.perf_counter() - self._epoch_start
        pl_module.log("predict/epoch_time_sec", elapsed)


class Generator(L.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def predict_step(self, batch, batch_idx):
        return self.model.generate(batch["input_ids"], max_new_tokens=256)


def main(model, predict_loader):
    trainer = L.Trainer(accelerator="gpu", devices=1, callbacks=[GenerationSpeedLogger()])
    trainer.predict(Generator(model), dataloaders=predict_loader)
