import numpy as np
import torch
from torch import optim
from torch.optim.lr_scheduler import StepLR

from config import cfg
from misc.utils import AverageMeter, Timer, update_model
from models.CC import CrowdCounter


class Trainer():
    def __init__(self, dataloader, cfg_data, pwd):
        self.cfg_data = cfg_data
        self.data_mode = cfg.DATASET
        self.exp_name = cfg.EXP_NAME
        self.pwd = pwd
        self.net_name = cfg.NET
        self.net = CrowdCounter(cfg.GPU_ID, self.net_name).cuda()
        self.optimizer = optim.Adam(self.net.CCN.parameters(), lr=cfg.LR, weight_decay=1e-4)
        self.scheduler = StepLR(self.optimizer, step_size=cfg.NUM_EPOCH_LR_DECAY, gamma=cfg.LR_DECAY)
        self.train_record = {'best_mae': 1e20, 'best_mse': 1e20, 'best_model_name': ''}
        self.timer = {'iter time': Timer(), 'train time': Timer(), 'val time': Timer()}
        self.epoch = 0
        self.i_tb = 0
        self.train_loader, self.val_loader, self.restore_transform = dataloader()

    def forward(self):
        for epoch in range(self.epoch, cfg.MAX_EPOCH):
            self.epoch = epoch
            if epoch > cfg.LR_DECAY_START:
                self.scheduler.step()

            # training
            self.timer['train time'].tic()
            self.train()
            self.timer['train time'].toc(average=False)

            # validation
            if epoch % cfg.VAL_FREQ == 0 or epoch > cfg.VAL_DENSE_START:
                self.timer['val time'].tic()
                self.validate()
                self.timer['val time'].toc(average=False)

    def train(self):  # training for all datasets
        self.net.train()
        for i, data in enumerate(self.train_loader, 0):
            self.timer['iter time'].tic()
            img, gt_map = data
            img = img.cuda()
            gt_map = gt_map.cuda()

            self.optimizer.zero_grad()
            pred_map = self.net(img, gt_map)
            loss = self.net.loss
            loss.backward()
            self.optimizer.step()

            if (i + 1) % cfg.PRINT_FREQ == 0:
                self.i_tb += 1
                self.timer['iter time'].toc(average=False)
                print('[ep %d][it %d][loss %.4f][lr %.4f][%.2fs]' % (
                    self.epoch + 1, i + 1, loss.item(), self.optimizer.param_groups[0]['lr'] * 10000,
                    self.timer['iter time'].diff))

    def validate(self):
        self.net.eval()
        maes = AverageMeter()
        for vi, data in enumerate(self.val_loader, 0):
            img, gt_map = data
            with torch.no_grad():
                img = img.cuda()
                gt_map = gt_map.cuda()
                pred_map = self.net.forward(img, gt_map)
                pred_cnt = np.sum(pred_map.data.cpu().numpy()) / self.cfg_data.LOG_PARA
                gt_count = np.sum(gt_map.data.cpu().numpy()) / self.cfg_data.LOG_PARA
                maes.update(abs(gt_count - pred_cnt))
        self.train_record = update_model(self.net, self.optimizer, self.scheduler, self.epoch, self.i_tb,
                                         self.exp_name, maes.avg, 0, self.train_record)
