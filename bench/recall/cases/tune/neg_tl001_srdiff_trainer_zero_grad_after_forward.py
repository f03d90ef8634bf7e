import os

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from utils.hparams import hparams
from utils.utils import move_to_cuda, load_checkpoint, save_checkpoint, tensors_to_scalars, Measure
from models.diffsr_modules import Unet, RRDBNet
from models.diffusion import GaussianDiffusion
from tasks.srdiff_df2k import Df2kDataSet


class Trainer:
    def __init__(self):
        self.work_dir = hparams['work_dir']
        self.first_val = True
        self.measure = Measure()

    def build_model(self):
        raise NotImplementedError

    def build_optimizer(self, model):
        raise NotImplementedError

    def build_scheduler(self, optimizer):
        raise NotImplementedError

    def training_step(self, batch):
        raise NotImplementedError

    def build_train_dataloader(self):
        dataset = Df2kDataSet('train')
        return DataLoader(dataset, batch_size=hparams['batch_size'], shuffle=True,
                          pin_memory=False, num_workers=hparams['num_workers'])

    def build_val_dataloader(self):
        return DataLoader(Df2kDataSet('valid'), batch_size=hparams['eval_batch_size'], shuffle=False, pin_memory=False)

    def train(self):
        model = self.build_model()
        optimizer = self.build_optimizer(model)
        self.global_step = training_step = load_checkpoint(model, optimizer, hparams['work_dir'])
        self.scheduler = scheduler = self.build_scheduler(optimizer)
        dataloader = self.build_train_dataloader()

        train_pbar = tqdm(dataloader, initial=training_step, total=float('inf'), dynamic_ncols=True, unit='step')
        while self.global_step < hparams['max_updates']:
            for batch in train_pbar:
                if training_step % hparams['val_check_interval'] == 0:
                    with torch.no_grad():
                        model.eval()
                        self.validate(training_step)
                    save_checkpoint(model, optimizer, self.work_dir, training_step, hparams['num_ckpt_keep'])
                model.train()
                batch = move_to_cuda(batch)
                losses, total_loss = self.training_step(batch)
                optimizer.zero_grad()

                total_loss.backward()
                optimizer.step()
                training_step += 1
                scheduler.step(training_step)
                self.global_step = training_step
                if training_step % 100 == 0:
                    train_pbar.set_postfix(**tensors_to_scalars(losses))

    def validate(self, training_step):
        val_dataloader = self.build_val_dataloader()
        for batch_idx, batch in enumerate(val_dataloader):
            if batch_idx >= hparams['num_sanity_val_steps'] and self.first_val:
                break
            batch = move_to_cuda(batch)
            img, rrdb_out, ret = self.sample_and_test(batch)
        self.first_val = False

    def sample_and_test(self, sample):
        img_hr, img_lr, img_lr_up = sample['img_hr'], sample['img_lr'], sample['img_lr_up']
        img_sr, rrdb_out = self.model.sample(img_lr, img_lr_up, img_hr.shape)
        ret = self.measure.measure(img_sr, img_hr, img_lr, hparams['sr_scale'])
        return img_sr, rrdb_out, ret


class SRDiffTrainer(Trainer):
    def build_model(self):
        hidden_size = hparams['hidden_size']
        dim_mults = [int(x) for x in hparams['unet_dim_mults'].split('|')]
        denoise_fn = Unet(hidden_size, out_dim=3, cond_dim=hparams['rrdb_num_feat'], dim_mults=dim_mults)
        rrdb = RRDBNet(3, 3, hparams['rrdb_num_feat'], hparams['rrdb_num_block'], hparams['rrdb_num_feat'] // 2)
        self.model = GaussianDiffusion(denoise_fn=denoise_fn, rrdb_net=rrdb, timesteps=hparams['timesteps'],
                                       loss_type=hparams['loss_type'])
        self.model.cuda()
        return self.model

    def build_optimizer(self, model):
        params = [p for n, p in model.named_parameters() if 'rrdb' not in n]
        return torch.optim.Adam(params, lr=hparams['lr'])

    def build_scheduler(self, optimizer):
        return torch.optim.lr_scheduler.StepLR(optimizer, hparams['decay_steps'], gamma=0.5)

    def training_step(self, batch):
        img_hr = batch['img_hr']
        img_lr = batch['img_lr']
        img_lr_up = batch['img_lr_up']
        losses, _, _ = self.model(img_hr, img_lr, img_lr_up)
        total_loss = sum(losses.values())
        return losses, total_loss


if __name__ == '__main__':
    SRDiffTrainer().train()
