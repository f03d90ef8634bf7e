from collections import defaultdict

import torch
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm

from loss_functions import create_loss_function
from model_utils import ExponentialMovingAverage, create_optimizer, create_scheduler


class ModelTrainer:
    def __init__(self, cfg, model, vec2box, progress, device, use_ddp: bool):
        train_cfg = cfg.task
        self.model = model
        self.device = device
        self.optimizer = create_optimizer(model, train_cfg.optimizer)
        self.scheduler = create_scheduler(self.optimizer, train_cfg.scheduler)
        self.vec2box = vec2box
        self.loss_fn = create_loss_function(cfg, vec2box)
        self.progress = progress
        self.num_epochs = cfg.task.epoch
        self.scaler = GradScaler()
        if getattr(train_cfg.ema, "enabled", False):
            self.ema = ExponentialMovingAverage(model, decay=train_cfg.ema.decay)
        else:
            self.ema = None

    def train_one_batch(self, images, targets):
        images, targets = images.to(self.device), targets.to(self.device)
        self.optimizer.zero_grad()
        with autocast():
            predicts = self.model(images)
            aux_predicts = self.vec2box(predicts["AUX"])
            main_predicts = self.vec2box(predicts["Main"])
            loss, loss_item = self.loss_fn(aux_predicts, main_predicts, targets)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss_item

    def train_one_epoch(self, dataloader):
        self.model.train()
        total_loss = defaultdict(lambda: torch.tensor(0.0, device=self.device))
        total_samples = 0
        for batch_size, images, targets, *_ in tqdm(dataloader):
            loss_each = self.train_one_batch(images, targets)
            for loss_name, loss_val in loss_each.items():
                total_loss[loss_name] += loss_val * batch_size
            total_samples += batch_size
            self.progress.one_batch(loss_each)
        for loss_val in total_loss.values():
            loss_val /= total_samples
        if self.scheduler:
            self.scheduler.step()
        return total_loss

    def solve(self, dataloader):
        for epoch_idx in range(1, self.num_epochs + 1):
            epoch_loss = self.train_one_epoch(dataloader)
            if self.ema:
                self.ema.apply_shadow()
