import time

import torch


class DefaultTrainer:
    def __init__(self, name, train_loader, val_loader, model, loss, optimizer, metric, device,
                 lr_scheduler=None, log_image_interval=100):
        self.name = name
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.model = model
        self.loss = loss
        self.optimizer = optimizer
        self.metric = metric
        self.device = device
        self.lr_scheduler = lr_scheduler
        self.log_image_interval = log_image_interval
        self._iteration = 0
        self.model.to(self.device)

    def fit(self, iterations):
        best_metric = float("inf")
        while self._iteration < iterations:
            t_per_iter = self._train_epoch()
            current_metric = self._validate()
            if self.lr_scheduler is not None:
                self.lr_scheduler.step(current_metric)
            best_metric = min(best_metric, current_metric)

    def _train_epoch(self):
        self.model.train()
        t_per_iter = time.time()
        for x, y in self.train_loader:
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            self.optimizer.zero_grad()
            pred = self.model(x)
            loss = self.loss(pred, y)
            loss.backward()
            self.optimizer.step()
            self._iteration += 1
        return (time.time() - t_per_iter) / max(len(self.train_loader), 1)

    def _validate(self):
        self.model.eval()
        metric_val = 0.0
        with torch.no_grad():
            for x, y in self.val_loader:
                x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
                pred = self.model(x)
                metric_val += self.metric(pred, y).item()
        return metric_val / len(self.val_loader)
