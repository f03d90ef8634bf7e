from abc import ABC, abstractmethod

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from ..logging import get_logger
from .forecasting_model import GlobalForecastingModel

logger = get_logger(__name__)


class TorchForecastingModel(GlobalForecastingModel, ABC):

    def __init__(self, input_chunk_length, output_chunk_length, batch_size=32, n_epochs=100,
                 optimizer_cls=torch.optim.Adam, optimizer_kwargs=None,
                 lr_scheduler_cls=None, lr_scheduler_kwargs=None, loss_fn=nn.MSELoss(),
                 torch_device_str=None):
        super().__init__()
        if torch_device_str is None:
            self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        else:
            self.device = torch.device(torch_device_str)
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.criterion = loss_fn
        self.optimizer_cls = optimizer_cls
        self.optimizer_kwargs = optimizer_kwargs or {'lr': 1e-3}
        self.lr_scheduler_cls = lr_scheduler_cls
        self.lr_scheduler_kwargs = lr_scheduler_kwargs or {}
        self.model = None

    @abstractmethod
    def _create_model(self, train_sample):
        pass

    def _init_model(self, train_sample):
        self.model = self._create_model(train_sample).to(self.device)
        self.optimizer = self.optimizer_cls(self.model.parameters(), **self.optimizer_kwargs)
        self.lr_scheduler = (self.lr_scheduler_cls(self.optimizer, **self.lr_scheduler_kwargs)
                             if self.lr_scheduler_cls is not None else None)

    def fit_from_dataset(self, train_dataset, val_dataset=None, verbose=False, epochs=0):
        if self.model is None:
            self._init_model(train_dataset[0])
        train_loader = DataLoader(train_dataset, batch_size=self.batch_size, shuffle=True,
                                  num_workers=0, pin_memory=True, drop_last=False)
        val_loader = None if val_dataset is None else DataLoader(
            val_dataset, batch_size=self.batch_size, shuffle=False, num_workers=0,
            pin_memory=True, drop_last=False)
        self._train(train_loader, val_loader, verbose, epochs or self.n_epochs)

    def _batch_to_device(self, batch):
        return tuple(t.to(self.device) for t in batch)

    def _produce_train_output(self, input_batch):
        return self.model(input_batch[0])

    def _compute_loss(self, output, target):
        return self.criterion(output, target)

    def _train(self, train_loader, val_loader, verbose, epochs):
        for epoch in range(epochs):
            total_loss = 0
            for batch_idx, train_batch in enumerate(train_loader):
                self.model.train()
                train_batch = self._batch_to_device(train_batch)
                output = self._produce_train_output(train_batch[:-1])
                target = train_batch[-1]
                loss = self._compute_loss(output, target)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total_loss += loss.item()

            if self.lr_scheduler is not None:
                self.lr_scheduler.step()

            if val_loader is not None:
                validation_loss = self._evaluate_validation_loss(val_loader)
                if verbose:
                    logger.info('epoch %d: training loss %.4f, validation loss %.4f',
                                epoch, total_loss / (batch_idx + 1), validation_loss)

    def _evaluate_validation_loss(self, val_loader):
        total_loss = 0
        self.model.eval()
        with torch.no_grad():
            for batch_idx, val_batch in enumerate(val_loader):
                output = self._produce_train_output(val_batch[:-1])
                target = val_batch[-1]
                loss = self._compute_loss(output, target)
                total_loss += loss.item()
        return total_loss / (batch_idx + 1)
