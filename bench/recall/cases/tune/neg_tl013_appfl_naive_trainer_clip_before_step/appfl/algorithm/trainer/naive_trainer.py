import copy
from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
from omegaconf import DictConfig
from torch.utils.data import DataLoader, Dataset

from appfl.algorithm.trainer.base_trainer import BaseTrainer


class NaiveTrainer(BaseTrainer):
    """Trains the client's model for a number of local epochs or steps."""

    def __init__(self, model: Optional[nn.Module] = None, loss_fn: Optional[nn.Module] = None,
                 metric: Optional[Any] = None, train_dataset: Optional[Dataset] = None,
                 val_dataset: Optional[Dataset] = None, train_configs: DictConfig = DictConfig({}),
                 logger: Optional[Any] = None, **kwargs):
        super().__init__(model=model, loss_fn=loss_fn, metric=metric, train_dataset=train_dataset,
                         val_dataset=val_dataset, train_configs=train_configs, logger=logger, **kwargs)
        self.train_dataloader = DataLoader(
            self.train_dataset,
            batch_size=self.train_configs.get("train_batch_size", 32),
            shuffle=self.train_configs.get("train_data_shuffle", True),
            num_workers=self.train_configs.get("num_workers", 0),
        )
        self.val_dataloader = DataLoader(
            self.val_dataset,
            batch_size=self.train_configs.get("val_batch_size", 32),
            shuffle=False,
            num_workers=self.train_configs.get("num_workers", 0),
        ) if self.val_dataset is not None else None

    def train(self):
        assert hasattr(self, "model") and self.model is not None, "Model is not set"
        device = self.train_configs.get("device", "cpu")
        self.model.to(device)
        optim_module = getattr(torch.optim, self.train_configs.optim)
        optimizer = optim_module(self.model.parameters(), **self.train_configs.optim_args)

        for epoch in range(self.train_configs.num_local_epochs):
            self.model.train()
            train_loss, target_true, target_pred = 0, [], []
            for data, target in self.train_dataloader:
                loss, pred, label = self._train_batch(optimizer, data, target)
                train_loss += loss
                target_true.append(label)
                target_pred.append(pred)
            train_loss /= len(self.train_dataloader)
            train_accuracy = float(self.metric(np.concatenate(target_true), np.concatenate(target_pred)))
            if self.val_dataloader is not None:
                val_loss, val_accuracy = self._validate()
        self.round += 1
        self.model_state = copy.deepcopy(self.model.state_dict())

    def get_parameters(self) -> Dict:
        return self.model_state

    def _validate(self) -> Tuple[float, float]:
        device = self.train_configs.get("device", "cpu")
        self.model.eval()
        val_loss = 0
        with torch.no_grad():
            target_pred, target_true = [], []
            for data, target in self.val_dataloader:
                data, target = data.to(device), target.to(device)
                output = self.model(data)
                val_loss += self.loss_fn(output, target).item()
                target_true.append(target.detach().cpu().numpy())
                target_pred.append(output.detach().cpu().numpy())
        val_loss /= len(self.val_dataloader)
        val_accuracy = float(self.metric(np.concatenate(target_true), np.concatenate(target_pred)))
        self.model.train()
        return val_loss, val_accuracy

    def _train_batch(self, optimizer: torch.optim.Optimizer, data, target) -> Tuple[float, np.ndarray, np.ndarray]:
        device = self.train_configs.get("device", "cpu")
        data = data.to(device)
        target = target.to(device)
        optimizer.zero_grad()
        output = self.model(data)
        loss = self.loss_fn(output, target)
        loss.backward()
        if getattr(self.train_configs, "clip_grad", False) or getattr(self.train_configs, "use_dp", False):
            assert hasattr(self.train_configs, "clip_value"), "Gradient clipping value must be specified"
            assert hasattr(self.train_configs, "clip_norm"), "Gradient clipping norm must be specified"
            torch.nn.utils.clip_grad_norm_(
                self.model.parameters(),
                self.train_configs.clip_value,
                norm_type=self.train_configs.clip_norm,
            )
        optimizer.step()
        return loss.item(), output.detach().cpu().numpy(), target.detach().cpu().numpy()
