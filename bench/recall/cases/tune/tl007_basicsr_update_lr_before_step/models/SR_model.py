import torch
import torch.nn as nn
from torch.optim import lr_scheduler

from models.base_model import BaseModel
from models.networks import define_G


class SRModel(BaseModel):
    def __init__(self, opt):
        super(SRModel, self).__init__(opt)
        train_opt = opt['train']
        self.netG = define_G(opt).to(self.device)
        if self.is_train:
            self.netG.train()
            self.cri_pix = nn.L1Loss().to(self.device)
            self.l_pix_w = train_opt['pixel_weight']
            self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=train_opt['lr_G'],
                                                betas=(train_opt['beta1'], train_opt['beta2']))
            self.optimizers.append(self.optimizer_G)
            for optimizer in self.optimizers:
                self.schedulers.append(lr_scheduler.MultiStepLR(optimizer, train_opt['lr_steps'],
                                                                gamma=train_opt['lr_gamma']))

    def feed_data(self, data, need_GT=True):
        self.var_L = data['LQ'].to(self.device)
        if need_GT:
            self.real_H = data['GT'].to(self.device)

    def optimize_parameters(self, step):
        self.optimizer_G.zero_grad()
        self.fake_H = self.netG(self.var_L)
        l_pix = self.l_pix_w * self.cri_pix(self.fake_H, self.real_H)
        l_pix.backward()
        self.optimizer_G.step()
        self.log_dict = {'l_pix': l_pix.item()}
