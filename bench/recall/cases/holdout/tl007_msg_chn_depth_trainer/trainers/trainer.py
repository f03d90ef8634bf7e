import os

import torch


class Trainer(object):
    def __init__(self, net, optimizer, lr_scheduler, objective, use_gpu=True, workspace_dir=None):
        self.net = net
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.objective = objective
        self.use_gpu = use_gpu
        self.workspace_dir = workspace_dir
        self.epoch = 1
        self.stats = {}
        self.training_time = 0
        self.use_save_checkpoint = True
        if use_gpu:
            self.net = self.net.cuda()

    def save_checkpoint(self):
        torch.save({'net': self.net.state_dict(), 'epoch': self.epoch},
                   os.path.join(self.workspace_dir, 'checkpoint_%04d.pth.tar' % self.epoch))
