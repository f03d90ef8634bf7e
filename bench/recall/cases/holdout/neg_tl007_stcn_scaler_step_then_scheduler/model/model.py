import torch
import torch.nn as nn
import torch.optim as optim

from model.losses import LossComputer
from model.network import STCN


class STCNModel:
    def __init__(self, para, logger=None, save_path=None, local_rank=0, world_size=1):
        self.para = para
        self.single_object = para['single_object']
        self.local_rank = local_rank
        self.STCN = nn.parallel.DistributedDataParallel(
            STCN(self.single_object).cuda(),
            device_ids=[local_rank], output_device=local_rank, broadcast_buffers=False)
        self.logger = logger
        self.save_path = save_path
        self.train_integrator = {}
        self.loss_computer = LossComputer(para)
        self.train()
        self.optimizer = optim.Adam(filter(lambda p: p.requires_grad, self.STCN.parameters()),
                                    lr=para['lr'], weight_decay=1e-7)
        self.scheduler = optim.lr_scheduler.MultiStepLR(self.optimizer, para['steps'], para['gamma'])
        if para['amp']:
            self.scaler = torch.cuda.amp.GradScaler()
        self.report_interval = 100

    def do_pass(self, data, it=0):
        torch.set_grad_enabled(self._is_train)
        for k, v in data.items():
            if type(v) != list and type(v) != dict and type(v) != int:
                data[k] = v.cuda(non_blocking=True)

        out = {}
        Fs = data['rgb']
        Ms = data['gt']
        with torch.cuda.amp.autocast(enabled=self.para['amp']):
            k16, kf16_thin, kf16, kf8, kf4 = self.STCN('encode_key', Fs)
            ref_v = self.STCN('encode_value', Fs[:, 0], kf16[:, 0], Ms[:, 0])
            prev_logits, prev_mask = self.STCN('segment', k16[:, :, 1], kf16_thin[:, 1], kf8[:, 1], kf4[:, 1],
                                               k16[:, :, 0:1], ref_v)
            out['mask_1'] = prev_mask
            out['logits_1'] = prev_logits
            losses = self.loss_computer.compute({**data, **out}, it)

        if self._is_train:
            self.optimizer.zero_grad(set_to_none=True)
            if self.para['amp']:
                self.scaler.scale(losses['total_loss']).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                losses['total_loss'].backward()
                self.optimizer.step()
            self.scheduler.step()
        return losses

    def train(self):
        self._is_train = True
        self._do_log = True
        self.STCN.eval()  # Set to eval mode so that batch norm stays frozen
        return self

    def val(self):
        self._is_train = False
        self._do_log = True
        self.STCN.eval()
        return self
