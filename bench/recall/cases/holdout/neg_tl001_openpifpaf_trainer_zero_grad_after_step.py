"""openpifpaf/network/trainer.py (reduced): the Trainer class that train.py builds and runs."""
import copy
import logging
import time

import torch

LOG = logging.getLogger(__name__)


class Trainer(object):
    def __init__(self, model, loss, optimizer, out, *,
                 lr_scheduler=None,
                 log_interval=10,
                 device=None,
                 fix_batch_norm=False,
                 stride_apply=1,
                 ema_decay=None,
                 train_profile=None):
        self.model = model
        self.loss = loss
        self.optimizer = optimizer
        self.out = out
        self.lr_scheduler = lr_scheduler

        self.log_interval = log_interval
        self.device = device
        self.fix_batch_norm = fix_batch_norm
        self.stride_apply = stride_apply

        self.ema_decay = ema_decay
        self.ema = None
        self.ema_restore_params = None

    def lr(self):
        for param_group in self.optimizer.param_groups:
            return param_group['lr']

    def step_ema(self):
        if self.ema is None:
            return
        for p, ema_p in zip(self.model.parameters(), self.ema):
            ema_p.mul_(1.0 - self.ema_decay).add_(p.data, alpha=self.ema_decay)

    def loop(self, train_scenes, val_scenes, epochs, start_epoch=0):
        if self.lr_scheduler is not None:
            for _ in range(start_epoch * len(train_scenes)):
                self.lr_scheduler.step()

        for epoch in range(start_epoch, epochs):
            self.train(train_scenes, epoch)
            self.write_model(epoch + 1, epoch == epochs - 1)
            self.val(val_scenes, epoch + 1)

    def train_batch(self, data, targets, meta, apply_gradients=True):
        if self.device:
            data = data.to(self.device, non_blocking=True)
            targets = [[t.to(self.device, non_blocking=True) for t in head] for head in targets]

        outputs = self.model(data)
        loss, head_losses = self.loss(outputs, targets)
        if loss is not None:
            loss.backward()
        if apply_gradients:
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.step_ema()

        return (
            float(loss.item()) if loss is not None else None,
            [float(l.item()) if l is not None else None for l in head_losses],
        )

    def val_batch(self, data, targets):
        if self.device:
            data = data.to(self.device, non_blocking=True)
            targets = [[t.to(self.device, non_blocking=True) for t in head] for head in targets]

        with torch.no_grad():
            outputs = self.model(data)
            loss, head_losses = self.loss(outputs, targets)

        return (
            float(loss.item()) if loss is not None else None,
            [float(l.item()) if l is not None else None for l in head_losses],
        )

    def train(self, scenes, epoch):
        start_time = time.time()
        self.model.train()
        if self.fix_batch_norm:
            for m in self.model.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.eval()

        self.ema_restore()
        self.ema = None

        epoch_loss = 0.0
        head_epoch_losses = None
        last_batch_end = time.time()
        self.optimizer.zero_grad()
        for batch_idx, (data, target, meta) in enumerate(scenes):
            preprocess_time = time.time() - last_batch_end

            batch_start = time.time()
            apply_gradients = batch_idx % self.stride_apply == 0
            loss, head_losses = self.train_batch(data, target, meta, apply_gradients)

            if self.ema_decay and self.ema is None:
                self.ema = copy.deepcopy([p.data for p in self.model.parameters()])

            if loss is not None:
                epoch_loss += loss
            if head_epoch_losses is None:
                head_epoch_losses = [0.0 for _ in head_losses]
            for i, head_loss in enumerate(head_losses):
                if head_loss is not None:
                    head_epoch_losses[i] += head_loss
            batch_time = time.time() - batch_start

            if batch_idx % self.log_interval == 0:
                LOG.info({'epoch': epoch, 'batch': batch_idx, 'n_batches': len(scenes),
                          'time': round(batch_time, 3), 'data_time': round(preprocess_time, 3),
                          'lr': self.lr(), 'loss': round(loss, 3) if loss is not None else None})

            if self.lr_scheduler is not None:
                self.lr_scheduler.step()

            last_batch_end = time.time()

        self.apply_ema()
        LOG.info({'type': 'train-epoch', 'epoch': epoch + 1, 'loss': round(epoch_loss / len(scenes), 5),
                  'time': round(time.time() - start_time, 1)})

    def val(self, scenes, epoch):
        start_time = time.time()
        self.model.eval()
        epoch_loss = 0.0
        for data, target, _ in scenes:
            loss, _ = self.val_batch(data, target)
            if loss is not None:
                epoch_loss += loss
        LOG.info({'type': 'val-epoch', 'epoch': epoch, 'loss': round(epoch_loss / len(scenes), 5),
                  'time': round(time.time() - start_time, 1)})

    def apply_ema(self):
        if self.ema is None:
            return
        self.ema_restore_params = copy.deepcopy([p.data for p in self.model.parameters()])
        for p, ema_p in zip(self.model.parameters(), self.ema):
            p.data.copy_(ema_p)

    def ema_restore(self):
        if self.ema_restore_params is None:
            return
        for p, ema_p in zip(self.model.parameters(), self.ema_restore_params):
            p.data.copy_(ema_p)
        self.ema_restore_params = None

    def write_model(self, epoch, final=True):
        self.model.cpu()
        torch.save({'model': self.model, 'epoch': epoch}, self.out + '.epoch{:03d}'.format(epoch))
        self.model.to(self.device)
