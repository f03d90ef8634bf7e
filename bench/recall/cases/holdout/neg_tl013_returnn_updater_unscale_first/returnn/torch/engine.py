"""
Main engine for PyTorch
"""

from __future__ import annotations

from contextlib import nullcontext

import torch
from torch.utils.data import DataLoader

from returnn.log import log
from returnn.torch.updater import Updater


class Engine:
    """
    PyTorch engine
    """

    def __init__(self, config, model: torch.nn.Module, train_loader: DataLoader, train_step_func):
        self.config = config
        self._device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self._model = model.to(self._device)
        self._train_dataloader = train_loader
        self._train_step_func = train_step_func
        self._updater = Updater(config=config, network=self._model, device=self._device,
                                initial_learning_rate=config.float("learning_rate", 1.0))
        self._updater.create_optimizer()

        amp_options = self.config.typed_value("torch_amp")
        self._use_autocast = amp_options is not None
        self._autocast_dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(
            (amp_options or {}).get("dtype", "float16"))
        self._grad_scaler = torch.cuda.amp.GradScaler() if self._autocast_dtype == torch.float16 else None
        self.epoch = 0
        self.global_train_step = 0

    def train(self):
        num_epochs = self.config.int("num_epochs", 10)
        while self.epoch < num_epochs:
            self.epoch += 1
            self.train_epoch()

    def train_epoch(self):
        print("start epoch %i" % self.epoch, file=log.v3)
        self._model.train()
        accumulated_loss = 0.0
        step_idx = 0
        for extern_data in self._train_dataloader:
            extern_data = {k: v.to(self._device) for k, v in extern_data.items()}
            self._updater.zero_grad()

            with self._autocast_ctx():
                total_loss = self._train_step_func(model=self._model, extern_data=extern_data)

            if self._grad_scaler is not None:
                self._grad_scaler.scale(total_loss).backward()
            else:
                total_loss.backward()

            self._updater.step(grad_scaler=self._grad_scaler)

            accumulated_loss += total_loss.detach().item()
            step_idx += 1
            self.global_train_step += 1
        print("Trained %i steps, avg loss %f" % (step_idx, accumulated_loss / max(step_idx, 1)), file=log.v3)

    def _autocast_ctx(self):
        if not self._use_autocast:
            return nullcontext()
        return torch.autocast(device_type=self._device.type, dtype=self._autocast_dtype)
