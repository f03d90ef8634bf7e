import argparse
import logging
import os
from statistics import mean

import torch
import torch.distributed as dist
import yaml
from tqdm import tqdm

import metric
import utils


class Train:

    def __init__(self, model, optimizer, lr_scheduler, train_loader, val_loader, epoch_start, epoch_max,
                 epoch_val, save_path, local_rank):
        self.model = model
        self.local_rank = local_rank
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.epoch_start = epoch_start
        self.epoch_max = epoch_max
        self.epoch_val = epoch_val
        self.save_path = save_path
        self.validation_metric = metric.Metrics(['JaccardIndex', 'DiceCoefficient'])

    def eval(self, epoch=None):
        self.model.eval()
        self.validation_metric.reset()
        metric_values = None
        for i, batch in enumerate(tqdm(self.val_loader, leave=False, desc='val')):
            for k, v in batch.items():
                batch[k] = v.to(self.model.device)
            inp = batch['inp']

            pred = torch.sigmoid(self.model.infer(inp))

            if self.model.device == 'cuda':
                batch_pred = [torch.zeros_like(pred) for _ in range(dist.get_world_size())]
                batch_gt = [torch.zeros_like(batch['gt']) for _ in range(dist.get_world_size())]
                dist.all_gather(batch_pred, pred)
                dist.all_gather(batch_gt, batch['gt'])
            else:
                batch_pred = pred
                batch_gt = batch['gt']
            batch_gt = (batch_gt > 0).int()
            self.validation_metric.reset_current()
            self.validation_metric.update(batch_pred, batch_gt)
            metric_values = self.validation_metric.compute()
        mean_IoU = metric_values["JaccardIndex"][1]
        return mean_IoU.item()

    def train(self):
        self.model.train()
        loss_list = []
        for batch in tqdm(self.train_loader, leave=False, desc='train'):
            for k, v in batch.items():
                batch[k] = v.to(self.model.device)
            inp = batch['inp']
            gt = batch['gt']
            self.model.set_input(inp, gt)
            self.model.optimize_parameters()

            if self.model.device == 'cuda':
                batch_loss = [torch.zeros_like(self.model.loss_G) for _ in range(dist.get_world_size())]
                dist.all_gather(batch_loss, self.model.loss_G)
            else:
                batch_loss = [torch.zeros_like(self.model.loss_G)]
                batch_loss[0] = self.model.loss_G
            loss_list.extend(batch_loss)
        loss = [i.item() for i in loss_list]
        return mean(loss)

    def start(self):
        best_mean_IoU = -1
        for epoch in range(self.epoch_start, self.epoch_max + 1):
            if self.model.device == 'cuda':
                self.train_loader.sampler.set_epoch(epoch)
            train_loss_G = self.train()
            self.lr_scheduler.step()
            if self.local_rank == 0:
                logging.info('Epoch: %d train_loss_G: %f' % (epoch, train_loss_G))
                self.save('last')
            if (self.epoch_val is not None) and (epoch % self.epoch_val == 0):
                current_mean_IoU = self.eval(epoch)
                if current_mean_IoU > best_mean_IoU:
                    best_mean_IoU = current_mean_IoU
                    if self.local_rank == 0:
                        self.save('best')

    def save(self, name):
        torch.save(self.model.state_dict(), os.path.join(self.save_path, f"model_epoch_{name}.pth"))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', default="configs/sam-vit-b.yaml")
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    with open(args.config, 'r') as f:
        config = yaml.load(f, Loader=yaml.FullLoader)
    device = config['model']['args']['device']
    if device == 'cuda':
        torch.distributed.init_process_group(backend='nccl')
        local_rank = torch.distributed.get_rank()
        torch.cuda.set_device(local_rank)
    else:
        local_rank = 0
    model, optimizer, epoch_start, lr_scheduler = utils.prepare_training(config)
    if model.device == 'cuda':
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank,
                                                          find_unused_parameters=True, broadcast_buffers=False)
        model = model.module
    train_loader, val_loader = utils.make_data_loaders(config=config)
    train = Train(model, optimizer, lr_scheduler, train_loader, val_loader, epoch_start, config['epoch_max'],
                  config.get('epoch_val'), config.get('write_dir'), local_rank=local_rank)
    train.start()
