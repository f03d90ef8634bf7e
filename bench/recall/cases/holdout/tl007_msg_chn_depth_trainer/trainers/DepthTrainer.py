import time

import torch

from trainers.trainer import Trainer
from utils.AverageMeter import AverageMeter


class KittiDepthTrainer(Trainer):
    def __init__(self, net, params, optimizer, objective, lr_scheduler, dataloaders, dataset_sizes,
                 workspace_dir, sets=['train', 'val']):
        super(KittiDepthTrainer, self).__init__(net, optimizer, lr_scheduler, objective,
                                                use_gpu=params['use_gpu'], workspace_dir=workspace_dir)
        self.lr_scheduler = lr_scheduler
        self.dataloaders = dataloaders
        self.dataset_sizes = dataset_sizes
        self.params = params
        self.save_chkpt_each = params['save_chkpt_each']
        self.sets = sets

    def train(self, max_epochs):
        for epoch in range(self.epoch, max_epochs + 1):
            start_epoch_time = time.time()
            self.epoch = epoch

            # Decay Learning Rate
            self.lr_scheduler.step()  # LR decay

            print('\nTraining Epoch {}: (lr={}) '.format(epoch, self.optimizer.param_groups[0]['lr']))
            loss_meter = self.train_epoch()

            if self.use_save_checkpoint and (self.epoch) % self.save_chkpt_each == 0:
                self.save_checkpoint()
            epoch_duration = time.time() - start_epoch_time
            self.training_time += epoch_duration
        return self.net

    def train_epoch(self):
        device = torch.device("cuda:" + str(self.params['gpu_id']) if torch.cuda.is_available() else "cpu")
        loss_meter = {}
        for s in self.sets:
            loss_meter[s] = AverageMeter()
        for s in self.sets:
            for data in self.dataloaders[s]:
                inputs_d, C, labels, item_idxs, inputs_rgb = data
                inputs_d = inputs_d.to(device)
                labels = labels.to(device)
                inputs_rgb = inputs_rgb.to(device)

                outputs = self.net(inputs_d, inputs_rgb)
                loss11 = self.objective(outputs[0], labels)
                loss12 = self.objective(outputs[1], labels)
                loss14 = self.objective(outputs[2], labels)
                loss = loss14 + loss12 + loss11 if self.epoch < 6 else loss11

                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
                loss_meter[s].update(loss11.item(), inputs_d.size(0))
        return loss_meter

    def evaluate(self):
        self.net.train(False)
        times = AverageMeter()
        loss_meter = {s: AverageMeter() for s in self.sets}
        device = torch.device("cuda:" + str(self.params['gpu_id']) if torch.cuda.is_available() else "cpu")
        with torch.no_grad():
            for s in self.sets:
                for data in self.dataloaders[s]:
                    start_time = time.time()

                    inputs_d, C, labels, item_idxs, inputs_rgb = data
                    inputs_d = inputs_d.to(device)
                    labels = labels.to(device)
                    inputs_rgb = inputs_rgb.to(device)

                    outputs = self.net(inputs_d, inputs_rgb)
                    if len(outputs) > 1:
                        outputs = outputs[0]

                    duration = time.time() - start_time
                    times.update(duration / inputs_d.size(0), inputs_d.size(0))

                    loss = self.objective(outputs, labels)
                    loss_meter[s].update(loss.item(), inputs_d.size(0))
                print('[{}]: {:.4f}'.format('Time', times.avg))
