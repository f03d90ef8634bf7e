"""tez's Model (reduced): a torch.nn.Module that trains itself; users override fetch_optimizer and forward."""
import torch
import torch.nn as nn
from tqdm import tqdm


class AverageMeter:
    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Model(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.train_loader = None
        self.valid_loader = None
        self.optimizer = None
        self.scheduler = None
        self.step_scheduler_after = None
        self.current_epoch = 0
        self.batch_index = 0
        self.device = None
        self.accumulation_steps = 1

    def _init_model(self, device, train_dataset, valid_dataset, train_bs, valid_bs, n_jobs,
                    accumulation_steps):
        if next(self.parameters()).device != device:
            self.to(device)
        self.device = device
        self.accumulation_steps = accumulation_steps
        self.train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=train_bs, num_workers=n_jobs,
                                                        shuffle=True, pin_memory=True)
        if valid_dataset is not None:
            self.valid_loader = torch.utils.data.DataLoader(valid_dataset, batch_size=valid_bs,
                                                            num_workers=n_jobs, shuffle=False, pin_memory=True)
        if self.optimizer is None:
            self.optimizer = self.fetch_optimizer()
        if self.scheduler is None:
            self.scheduler = self.fetch_scheduler()

    def fetch_optimizer(self, *args, **kwargs):
        return

    def fetch_scheduler(self, *args, **kwargs):
        return

    def monitor_metrics(self, *args, **kwargs):
        return

    def model_fn(self, data):
        for key, value in data.items():
            data[key] = value.to(self.device)
        output, loss, metrics = self(**data)
        return output, loss, metrics

    def train_one_step(self, data):
        if self.accumulation_steps == 1 and self.batch_index == 0:
            self.zero_grad()
        _, loss, metrics = self.model_fn(data)
        loss = loss / self.accumulation_steps
        loss.backward()
        if (self.batch_index + 1) % self.accumulation_steps == 0:
            self.optimizer.step()
            if self.scheduler is not None and self.step_scheduler_after == "batch":
                self.scheduler.step()
            if self.batch_index > 0:
                self.zero_grad()
        return loss, metrics

    def validate_one_step(self, data):
        _, loss, metrics = self.model_fn(data)
        return loss, metrics

    def train_one_epoch(self, data_loader):
        self.train()
        losses = AverageMeter()
        tk0 = tqdm(data_loader, total=len(data_loader))
        for b_idx, data in enumerate(tk0):
            self.batch_index = b_idx
            loss, metrics = self.train_one_step(data)
            losses.update(loss.item() * self.accumulation_steps, data_loader.batch_size)
            tk0.set_postfix(loss=losses.avg, stage="train")
        tk0.close()
        return losses.avg

    def validate_one_epoch(self, data_loader):
        self.eval()
        losses = AverageMeter()
        tk0 = tqdm(data_loader, total=len(data_loader))
        for b_idx, data in enumerate(tk0):
            with torch.no_grad():
                loss, metrics = self.validate_one_step(data)
            losses.update(loss.item(), data_loader.batch_size)
            tk0.set_postfix(loss=losses.avg, stage="valid")
        tk0.close()
        return losses.avg

    def fit(self, train_dataset, valid_dataset=None, device="cuda", epochs=10, train_bs=16, valid_bs=16,
            n_jobs=8, accumulation_steps=1):
        self._init_model(device=device, train_dataset=train_dataset, valid_dataset=valid_dataset,
                         train_bs=train_bs, valid_bs=valid_bs, n_jobs=n_jobs,
                         accumulation_steps=accumulation_steps)
        for _ in range(epochs):
            train_loss = self.train_one_epoch(self.train_loader)
            if self.valid_loader:
                valid_loss = self.validate_one_epoch(self.valid_loader)
            if self.scheduler is not None and self.step_scheduler_after == "epoch":
                self.scheduler.step()
            self.current_epoch += 1
