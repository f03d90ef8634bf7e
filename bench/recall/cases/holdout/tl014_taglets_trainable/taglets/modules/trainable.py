import copy
import logging
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

log = logging.getLogger(__name__)


class Trainable:
    """
    A class with a trainable model.

    Anything that has a trainable model can be a Trainable: a taglet, the end model.
    """

    def __init__(self, task):
        self.name = 'base'
        self.task = task
        self.lr = 0.0005
        self.criterion = nn.CrossEntropyLoss()
        self.seed = 0
        self.num_epochs = 50 if not os.environ.get("CI") else 5
        self.batch_size = 256 if not os.environ.get("CI") else 32
        self.select_on_val = True
        self.params_to_update = []
        self.model = None
        self.optimizer = None
        self.lr_scheduler = None
        self.n_proc = torch.cuda.device_count()
        self.num_workers = 4

    def train(self, train_data, val_data):
        os.environ['MASTER_ADDR'] = '127.0.0.1'
        os.environ['MASTER_PORT'] = '8888'

        # Launches one process per GPU that each train a copy of the model
        mp.spawn(self._do_train, nprocs=self.n_proc, args=(train_data, val_data), join=True)

    def _do_train(self, rank, train_data, val_data):
        dist.init_process_group('nccl', rank=rank, world_size=self.n_proc)
        torch.cuda.set_device(rank)

        train_data_loader = self._get_dataloader(data=train_data, shuffle=True)
        val_data_loader = self._get_dataloader(data=val_data, shuffle=False) if val_data is not None else None

        self.model = self.model.cuda(rank)
        self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[rank])

        best_model_to_save = None
        best_val_acc = 0
        for epoch in range(self.num_epochs):
            log.info('Epoch {}/{}'.format(epoch + 1, self.num_epochs))

            # Train on training data
            train_loss, train_acc = self._train_epoch(rank, train_data_loader)
            log.info('Train loss: {:.4f}'.format(train_loss))
            log.info('Train acc: {:.4f}%'.format(train_acc * 100))

            # Evaluation on validation data
            if val_data_loader is not None:
                val_loss, val_acc = self._validate_epoch(rank, val_data_loader)
                log.info('Validation loss: {:.4f}'.format(val_loss))
                log.info('Validation acc: {:.4f}%'.format(val_acc * 100))
                if val_acc > best_val_acc and rank == 0:
                    best_val_acc = val_acc
                    best_model_to_save = copy.deepcopy(self.model.module.state_dict())

            if self.lr_scheduler:
                self.lr_scheduler.step()

        if self.select_on_val and best_model_to_save is not None and rank == 0:
            self.model.module.load_state_dict(best_model_to_save)
        dist.destroy_process_group()

    def _get_dataloader(self, data, shuffle):
        sampler = torch.utils.data.distributed.DistributedSampler(data, shuffle=shuffle, seed=self.seed)
        return torch.utils.data.DataLoader(
            dataset=data, batch_size=self.batch_size // self.n_proc, shuffle=False,
            num_workers=self.num_workers, pin_memory=True, sampler=sampler
        )

    def _train_epoch(self, rank, train_data_loader):
        self.model.train()
        running_loss = 0
        running_acc = 0
        for batch in train_data_loader:
            inputs = batch[0].cuda(rank)
            labels = batch[1].cuda(rank)

            self.optimizer.zero_grad()
            with torch.set_grad_enabled(True):
                outputs = self.model(inputs)
                loss = self.criterion(outputs, labels)
                loss.backward()
                self.optimizer.step()

            _, preds = torch.max(outputs, 1)
            running_loss += loss.item()
            running_acc += torch.sum(preds == labels).item()

        epoch_loss = running_loss / len(train_data_loader.dataset)
        epoch_acc = running_acc / len(train_data_loader.dataset)
        return epoch_loss, epoch_acc

    def _validate_epoch(self, rank, val_data_loader):
        self.model.eval()
        running_loss = 0
        running_acc = 0
        with torch.no_grad():
            for inputs, labels in val_data_loader:
                inputs = inputs.cuda(rank)
                labels = labels.cuda(rank)
                outputs = self.model(inputs)
                loss = self.criterion(outputs, labels)
                _, preds = torch.max(outputs, 1)
                running_loss += loss.item()
                running_acc += torch.sum(preds == labels).item()
        return running_loss / len(val_data_loader.dataset), running_acc / len(val_data_loader.dataset)
