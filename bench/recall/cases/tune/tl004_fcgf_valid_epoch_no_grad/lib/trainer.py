import logging
import os
import os.path as osp

import MinkowskiEngine as ME
import numpy as np
import torch
import torch.optim as optim
import torch.nn.functional as F

from lib.metrics import pdist
from lib.timer import AverageMeter, Timer
from model import load_model
from util.file import ensure_dir


class HardestContrastiveLossTrainer:
    def __init__(self, config, data_loader, val_data_loader=None):
        num_feats = 1
        Model = load_model(config.model)
        self.model = Model(num_feats, config.model_n_out, bn_momentum=config.bn_momentum,
                           normalize_feature=config.normalize_feature, conv1_kernel_size=config.conv1_kernel_size, D=3)
        self.config = config
        self.max_epoch = config.max_epoch
        self.val_max_iter = config.val_max_iter
        self.val_epoch_freq = config.val_epoch_freq
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.optimizer = getattr(optim, config.optimizer)(self.model.parameters(), lr=config.lr,
                                                          momentum=config.momentum, weight_decay=config.weight_decay)
        self.scheduler = optim.lr_scheduler.ExponentialLR(self.optimizer, config.exp_gamma)
        self.start_epoch = 1
        self.data_loader = data_loader
        self.val_data_loader = val_data_loader
        self.neg_thresh = config.neg_thresh
        self.pos_thresh = config.pos_thresh
        self.model = self.model.to(self.device)

    def train(self):
        for epoch in range(self.start_epoch, self.max_epoch + 1):
            lr = self.scheduler.get_last_lr()
            logging.info(f" Epoch: {epoch}, LR: {lr}")
            self._train_epoch(epoch)
            self.scheduler.step()

            if self.val_data_loader is not None and epoch % self.val_epoch_freq == 0:
                val_dict = self._valid_epoch()
                logging.info(f"validation: {val_dict}")

    def contrastive_hardest_negative_loss(self, F0, F1, positive_pairs, num_pos=5192, num_hn_samples=2048):
        N0, N1 = len(F0), len(F1)
        N_pos_pairs = len(positive_pairs)
        hash_seed = max(N0, N1)
        sel0 = np.random.choice(N0, min(N0, num_hn_samples), replace=False)
        sel1 = np.random.choice(N1, min(N1, num_hn_samples), replace=False)
        if N_pos_pairs > num_pos:
            pos_sel = np.random.choice(N_pos_pairs, num_pos, replace=False)
            sample_pos_pairs = positive_pairs[pos_sel]
        else:
            sample_pos_pairs = positive_pairs
        subF0, subF1 = F0[sel0], F1[sel1]
        pos_ind0 = sample_pos_pairs[:, 0].long()
        pos_ind1 = sample_pos_pairs[:, 1].long()
        posF0, posF1 = F0[pos_ind0], F1[pos_ind1]
        D01 = pdist(posF0, subF1, dist_type="L2")
        D10 = pdist(posF1, subF0, dist_type="L2")
        D01min, _ = D01.min(1)
        D10min, _ = D10.min(1)
        pos_loss = (posF0 - posF1).pow(2).sum(1)
        neg_loss0 = F.relu(self.neg_thresh - D01min).pow(2)
        neg_loss1 = F.relu(self.neg_thresh - D10min).pow(2)
        return pos_loss.mean(), (neg_loss0.mean() + neg_loss1.mean()) / 2

    def _train_epoch(self, epoch):
        gc_timer = Timer()
        self.model.train()
        data_loader_iter = self.data_loader.__iter__()
        for curr_iter in range(len(self.data_loader)):
            self.optimizer.zero_grad()
            input_dict = next(data_loader_iter)
            sinput0 = ME.SparseTensor(input_dict["sinput0_F"].to(self.device), coordinates=input_dict["sinput0_C"].to(self.device))
            F0 = self.model(sinput0).F
            sinput1 = ME.SparseTensor(input_dict["sinput1_F"].to(self.device), coordinates=input_dict["sinput1_C"].to(self.device))
            F1 = self.model(sinput1).F
            pos_pairs = input_dict["correspondences"]
            pos_loss, neg_loss = self.contrastive_hardest_negative_loss(F0, F1, pos_pairs)
            loss = pos_loss + neg_loss
            loss.backward()
            self.optimizer.step()
            if curr_iter % self.config.stat_freq == 0:
                logging.info(f"Train Epoch: {epoch} [{curr_iter}/{len(self.data_loader)}], Loss: {loss.item():.3f}")

    def _valid_epoch(self):
        # Change the network to evaluation mode
        self.model.eval()
        self.val_data_loader.dataset.reset_seed(0)
        num_data = 0
        hit_ratio_meter, loss_meter = AverageMeter(), AverageMeter()
        data_timer, feat_timer = Timer(), Timer()
        tot_num_data = len(self.val_data_loader.dataset)
        if self.val_max_iter > 0:
            tot_num_data = min(self.val_max_iter, tot_num_data)
        data_loader_iter = self.val_data_loader.__iter__()

        for batch_idx in range(tot_num_data):
            data_timer.tic()
            input_dict = next(data_loader_iter)
            data_timer.toc()

            # pairs consist of (xyz1 index, xyz0 index)
            feat_timer.tic()
            sinput0 = ME.SparseTensor(input_dict["sinput0_F"].to(self.device), coordinates=input_dict["sinput0_C"].to(self.device))
            F0 = self.model(sinput0).F
            sinput1 = ME.SparseTensor(input_dict["sinput1_F"].to(self.device), coordinates=input_dict["sinput1_C"].to(self.device))
            F1 = self.model(sinput1).F
            feat_timer.toc()

            pos_loss, neg_loss = self.contrastive_hardest_negative_loss(F0, F1, input_dict["correspondences"])
            loss_meter.update((pos_loss + neg_loss).item())
            num_data += 1
            torch.cuda.empty_cache()

        logging.info(f"Final Loss: {loss_meter.avg:.3f}, Feature Extraction Time: {feat_timer.avg:.3f}")
        return {"loss": loss_meter.avg}
