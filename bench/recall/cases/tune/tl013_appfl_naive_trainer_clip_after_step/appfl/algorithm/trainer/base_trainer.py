import abc
from typing import Any, Dict, Optional

import torch.nn as nn
from omegaconf import DictConfig


class BaseTrainer:
    """Abstract base trainer for FL clients."""

    def __init__(self, model: Optional[nn.Module] = None, loss_fn: Optional[nn.Module] = None,
                 metric: Optional[Any] = None, train_dataset=None, val_dataset=None,
                 train_configs: DictConfig = DictConfig({}), logger: Optional[Any] = None, **kwargs):
        self.round = 0
        self.model = model
        self.loss_fn = loss_fn
        self.metric = metric
        self.train_dataset = train_dataset
        self.val_dataset = val_dataset
        self.train_configs = train_configs
        self.logger = logger

    @abc.abstractmethod
    def get_parameters(self) -> Dict:
        """Return local model parameters"""

    @abc.abstractmethod
    def train(self):
        pass
