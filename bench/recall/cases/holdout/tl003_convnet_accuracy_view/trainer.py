import time

import torch
import torch.nn as nn

from utils.meters import AverageMeter, accuracy


class Trainer(object):

    def __init__(self, model, criterion, optimizer=None, device_ids=[0], device=torch.cuda,
                 dtype=torch.float, print_freq=100, grad_clip=-1):
        self._model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device
        self.dtype = dtype
        self.print_freq = print_freq
        self.grad_clip = grad_clip
        if device_ids is not None and len(device_ids) > 1:
            self.model = nn.DataParallel(model, device_ids)
        else:
            self.model = self._model

    def _step(self, inputs_batch, target_batch, training=False):
        output = self.model(inputs_batch)
        loss = self.criterion(output, target_batch)
        if training:
            self.optimizer.zero_grad()
            loss.backward()
            if self.grad_clip > 0:
                nn.utils.clip_grad_norm_(self._model.parameters(), self.grad_clip)
            self.optimizer.step()
        return output, loss

    def forward(self, data_loader, training=False):
        meters = {name: AverageMeter() for name in ['step', 'data', 'loss', 'prec1', 'prec5']}
        end = time.time()
        for i, (inputs, target) in enumerate(data_loader):
            meters['data'].update(time.time() - end)
            target = target.to(self.device)
            inputs = inputs.to(self.device, dtype=self.dtype)
            output, loss = self._step(inputs, target, training=training)
            prec1, prec5 = accuracy(output, target, topk=(1, 5))
            meters['loss'].update(float(loss), inputs.size(0))
            meters['prec1'].update(float(prec1), inputs.size(0))
            meters['prec5'].update(float(prec5), inputs.size(0))
            end = time.time()
        return {name: meter.avg for name, meter in meters.items()}

    def train(self, data_loader):
        self.model.train()
        return self.forward(data_loader, training=True)

    def validate(self, data_loader):
        self.model.eval()
        with torch.no_grad():
            return self.forward(data_loader, training=False)
