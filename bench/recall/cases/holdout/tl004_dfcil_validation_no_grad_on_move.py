from __future__ import print_function

import copy

import numpy as np
import torch
import torch.nn as nn

import models
from utils.metric import AverageMeter, Timer, accuracy


class NormalNN(nn.Module):
    def __init__(self, learner_config):
        super(NormalNN, self).__init__()
        self.log = print
        self.config = learner_config
        self.out_dim = learner_config['out_dim']
        self.model = self.create_model()
        self.batch_size = learner_config['batch_size']
        self.top_k = learner_config['top_k']
        self.criterion_fn = nn.CrossEntropyLoss(reduction="none")
        if learner_config['gpuid'][0] >= 0:
            self.cuda()
            self.gpu = True
        else:
            self.gpu = False
        self.valid_out_dim = 0
        self.schedule = self.config['schedule']
        self.init_optimizer()

    def learn_batch(self, train_loader, train_dataset, model_save_dir, val_loader=None):
        self.init_optimizer()
        if val_loader is not None:
            self.validation(val_loader)
        losses = AverageMeter()
        acc = AverageMeter()
        batch_timer = Timer()
        for epoch in range(self.config['schedule'][-1]):
            self.epoch = epoch
            if epoch > 0: self.scheduler.step()
            batch_timer.tic()
            for i, (x, y, task) in enumerate(train_loader):
                # verify in train mode
                self.model.train()
                if self.gpu:
                    x = x.cuda()
                    y = y.cuda()
                loss, output = self.update_model(x, y)
                y = y.detach()
                accumulate_acc(output, y, task, acc, topk=(self.top_k,))
                losses.update(loss, y.size(0))
            self.log(' * Loss {loss.avg:.3f} | Train Acc {acc.avg:.3f}'.format(loss=losses, acc=acc))
            if val_loader is not None:
                self.validation(val_loader)
            losses = AverageMeter()
            acc = AverageMeter()
        self.model.eval()

    def criterion(self, logits, targets, data_weights):
        return (self.criterion_fn(logits, targets.long()) * data_weights).mean()

    def update_model(self, inputs, targets):
        dw_cls = self.dw_k[-1 * torch.ones(targets.size()).long()]
        logits = self.forward(inputs)
        total_loss = self.criterion(logits, targets.long(), dw_cls)
        self.optimizer.zero_grad()
        total_loss.backward()
        self.optimizer.step()
        return total_loss.detach(), logits

    def validation(self, dataloader, model=None, task_in=None, verbal=True):
        if model is None:
            model = self.model
        batch_timer = Timer()
        acc = AverageMeter()
        batch_timer.tic()

        orig_mode = model.training
        model.eval()
        for i, (input, target, task) in enumerate(dataloader):

            if self.gpu:
                with torch.no_grad():
                    input = input.cuda()
                    target = target.cuda()
            if task_in is None:
                output = model.forward(input)[:, :self.valid_out_dim]
                acc = accumulate_acc(output, target, task, acc, topk=(self.top_k,))
            else:
                mask = target >= task_in[0]
                mask_ind = mask.nonzero().view(-1)
                input, target = input[mask_ind], target[mask_ind]
                if len(target) > 1:
                    output = model.forward(input)[:, task_in]
                    acc = accumulate_acc(output, target - task_in[0], task, acc, topk=(self.top_k,))

        model.train(orig_mode)
        if verbal:
            self.log(' * Val Acc {acc.avg:.3f}, Total time {time:.2f}'.format(acc=acc, time=batch_timer.toc()))
        return acc.avg

    def init_optimizer(self):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.config['lr'],
                                         momentum=self.config['momentum'],
                                         weight_decay=self.config['weight_decay'])
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, milestones=self.schedule, gamma=0.1)
        self.dw_k = torch.ones(self.valid_out_dim + 1)

    def create_model(self):
        cfg = self.config
        return models.__dict__[cfg['model_type']].__dict__[cfg['model_name']](out_dim=self.out_dim)

    def forward(self, x):
        return self.model.forward(x)[:, :self.valid_out_dim]

    def cuda(self):
        torch.cuda.set_device(self.config['gpuid'][0])
        self.model = self.model.cuda()
        self.criterion_fn = self.criterion_fn.cuda()
        return self


def accumulate_acc(output, target, task, meter, topk):
    meter.update(accuracy(output, target, topk), len(target))
    return meter
