"""Defines the basenetwork class."""
import numpy as np
import torch
from torch import nn, optim
from tqdm import tqdm, trange


class BaseNetwork(nn.Module):
    """Base class upon which all Vulcan NNs will be based."""

    def __init__(self, name, config, in_dim=None, optim_spec=None, lr_scheduler=None,
                 num_classes=None, criter_spec=nn.CrossEntropyLoss(), device="cuda:0"):
        super(BaseNetwork, self).__init__()
        self.name = name
        self._config = config
        self.in_dim = in_dim
        self.optim_spec = optim_spec or {"name": "Adam", "lr": 0.001}
        self.lr_scheduler = lr_scheduler
        self.num_classes = num_classes
        self.criter_spec = criter_spec
        self.device = torch.device(device if torch.cuda.is_available() else "cpu")
        self.optim = None
        self.criter = None
        self.epoch = 0

    def _init_trainer(self):
        self.optim = self._get_optimizer(self.optim_spec)
        self.criter = self.criter_spec

    def _get_optimizer(self, optim_spec):
        optim_spec = dict(optim_spec)
        name = optim_spec.pop("name")
        return getattr(optim, name)(self.parameters(), **optim_spec)

    def fit(self, train_loader, val_loader, epochs, retain_graph=None, valid_interv=4):
        """Train the network on the provided data."""
        if self.optim is None:
            self._init_trainer()
        self.to(self.device)
        history = []
        for epoch in trange(epochs, desc="Epoch: ", ncols=80):
            if self.lr_scheduler is not None:
                self.lr_scheduler.step(epoch=self.epoch)

            train_loss, train_acc = self._train_epoch(train_loader, retain_graph)

            valid_loss = valid_acc = np.nan
            if epoch % valid_interv == 0:
                valid_loss, valid_acc = self._validate(val_loader)
            history.append((train_loss, train_acc, valid_loss, valid_acc))
            self.epoch += 1
        return history

    def _train_epoch(self, train_loader, retain_graph):
        """Trains the network for 1 epoch."""
        self.train()
        train_loss_accumulator = 0.0
        train_accuracy_accumulator = 0.0
        pbar = tqdm(train_loader, desc="Training batch: ", ncols=80)
        for data, targets in pbar:
            data, targets = data.to(self.device), targets.to(self.device)

            # Forward + Backward + Optimize
            predictions = self(data)
            train_loss = self.criter(predictions, targets)
            train_loss_accumulator += train_loss.item()

            self.optim.zero_grad()
            train_loss.backward(retain_graph=retain_graph)
            self.optim.step()

            predictions = torch.argmax(predictions, dim=1)
            train_accuracy_accumulator += (predictions == targets).float().mean().item()

        train_loss = train_loss_accumulator / len(train_loader)
        train_accuracy = train_accuracy_accumulator / len(train_loader)
        return train_loss, train_accuracy

    def _validate(self, val_loader):
        """Validate the network on the validation data."""
        self.eval()
        val_loss_accumulator = 0.0
        val_accuracy_accumulator = 0.0
        with torch.no_grad():
            for data, targets in val_loader:
                data, targets = data.to(self.device), targets.to(self.device)
                predictions = self(data)
                val_loss_accumulator += self.criter(predictions, targets).item()
                predictions = torch.argmax(predictions, dim=1)
                val_accuracy_accumulator += (predictions == targets).float().mean().item()
        return val_loss_accumulator / len(val_loader), val_accuracy_accumulator / len(val_loader)
