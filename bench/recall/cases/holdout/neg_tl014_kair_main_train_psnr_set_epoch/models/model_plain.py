from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.parallel import DataParallel, DistributedDataParallel
from torch.optim import Adam, lr_scheduler

from models.select_network import define_G


class ModelPlain:
    """Train with pixel loss"""

    def __init__(self, opt):
        self.opt = opt
        self.opt_train = self.opt['train']
        self.device = torch.device('cuda' if opt['gpu_ids'] is not None else 'cpu')
        self.netG = define_G(opt).to(self.device)
        if self.opt['dist']:
            self.netG = DistributedDataParallel(self.netG, device_ids=[torch.cuda.current_device()],
                                                find_unused_parameters=self.opt_train['find_unused_parameters'])
        else:
            self.netG = DataParallel(self.netG)
        self.schedulers = []
        self.log_dict = OrderedDict()

    def init_train(self):
        self.netG.train()
        self.G_lossfn = nn.L1Loss().to(self.device)
        self.G_lossfn_weight = self.opt_train['G_lossfn_weight']
        G_optim_params = [v for k, v in self.netG.named_parameters() if v.requires_grad]
        self.G_optimizer = Adam(G_optim_params, lr=self.opt_train['G_optimizer_lr'], weight_decay=0)
        self.schedulers.append(lr_scheduler.MultiStepLR(self.G_optimizer,
                                                        self.opt_train['G_scheduler_milestones'],
                                                        self.opt_train['G_scheduler_gamma']))

    def update_learning_rate(self, n):
        for scheduler in self.schedulers:
            scheduler.step(n)

    def feed_data(self, data, need_H=True):
        self.L = data['L'].to(self.device)
        if need_H:
            self.H = data['H'].to(self.device)

    def optimize_parameters(self, current_step):
        self.G_optimizer.zero_grad()
        self.E = self.netG(self.L)
        G_loss = self.G_lossfn_weight * self.G_lossfn(self.E, self.H)
        G_loss.backward()

        G_optimizer_clipgrad = self.opt_train['G_optimizer_clipgrad'] if self.opt_train['G_optimizer_clipgrad'] else 0
        if G_optimizer_clipgrad > 0:
            torch.nn.utils.clip_grad_norm_(self.netG.parameters(), max_norm=G_optimizer_clipgrad, norm_type=2)

        self.G_optimizer.step()
        self.log_dict['G_loss'] = G_loss.item()

    def test(self):
        self.netG.eval()
        with torch.no_grad():
            self.E = self.netG(self.L)
        self.netG.train()

    def current_log(self):
        return self.log_dict

    def current_visuals(self):
        return OrderedDict(E=self.E.detach()[0].float().cpu(), H=self.H.detach()[0].float().cpu())

    def save(self, iter_label):
        torch.save(self.netG.state_dict(), '{}_G.pth'.format(iter_label))
