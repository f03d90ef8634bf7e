import math
import time

import numpy as np
import torch
from torch import distributed as dist
from torch import nn, optim

from ultralytics.utils import LOGGER, RANK
from ultralytics.utils.torch_utils import ModelEMA, one_cycle


class BaseTrainer:
    """Base trainer: builds the model, loaders and optimizer, and runs the epochs."""

    def __init__(self, args, model, train_loader, device):
        self.args = args
        self.device = device
        self.model = model.to(device)
        self.train_loader = train_loader
        self.epochs = args.epochs
        self.start_epoch = 0
        self.batch_size = args.batch
        self.amp = device.type != "cpu"
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.amp)
        self.ema = ModelEMA(self.model)
        self.accumulate = max(round(self.args.nbs / self.batch_size), 1)
        weight_decay = self.args.weight_decay * self.batch_size * self.accumulate / self.args.nbs
        self.optimizer = self.build_optimizer(self.model, lr=self.args.lr0, momentum=self.args.momentum, decay=weight_decay)
        self.lf = one_cycle(1, self.args.lrf, self.epochs)
        self.scheduler = optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda=self.lf)

    def build_optimizer(self, model, lr=0.001, momentum=0.9, decay=1e-5):
        g = [], [], []
        bn = tuple(v for k, v in nn.__dict__.items() if "Norm" in k)
        for module_name, module in model.named_modules():
            for param_name, param in module.named_parameters(recurse=False):
                if "bias" in param_name:
                    g[2].append(param)
                elif isinstance(module, bn):
                    g[1].append(param)
                else:
                    g[0].append(param)
        optimizer = optim.SGD(g[2], lr=lr, momentum=momentum, nesterov=True)
        optimizer.add_param_group({"params": g[0], "weight_decay": decay})
        optimizer.add_param_group({"params": g[1], "weight_decay": 0.0})
        return optimizer

    def preprocess_batch(self, batch):
        batch["img"] = batch["img"].to(self.device, non_blocking=True).float() / 255
        return batch

    def _do_train(self, world_size=1):
        nb = len(self.train_loader)
        nw = max(round(self.args.warmup_epochs * nb), 100) if self.args.warmup_epochs > 0 else -1
        last_opt_step = -1
        self.optimizer.zero_grad()  # zero any resumed gradients to ensure stability on train start
        epoch = self.start_epoch
        while True:
            self.epoch = epoch
            self.model.train()
            if RANK != -1:
                self.train_loader.sampler.set_epoch(epoch)
            pbar = enumerate(self.train_loader)
            self.tloss = None
            self.optimizer.zero_grad()
            for i, batch in pbar:
                ni = i + nb * epoch
                if ni <= nw:
                    xi = [0, nw]
                    self.accumulate = max(1, int(np.interp(ni, xi, [1, self.args.nbs / self.batch_size]).round()))
                    for j, x in enumerate(self.optimizer.param_groups):
                        x["lr"] = np.interp(ni, xi, [self.args.warmup_bias_lr if j == 0 else 0.0, x["initial_lr"] * self.lf(epoch)])

                with torch.cuda.amp.autocast(self.amp):
                    batch = self.preprocess_batch(batch)
                    self.loss, self.loss_items = self.model(batch)
                    if RANK != -1:
                        self.loss *= world_size
                    self.tloss = (
                        (self.tloss * i + self.loss_items) / (i + 1) if self.tloss is not None else self.loss_items
                    )

                self.scaler.scale(self.loss).backward()

                if ni - last_opt_step >= self.accumulate:
                    self.optimizer_step()
                    last_opt_step = ni

            self.lr = {f"lr/pg{ir}": x["lr"] for ir, x in enumerate(self.optimizer.param_groups)}
            self.scheduler.step()
            LOGGER.info(f"epoch {epoch} losses {self.tloss}")
            epoch += 1
            if epoch >= self.epochs:
                break

    def optimizer_step(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        if self.ema:
            self.ema.update(self.model)
