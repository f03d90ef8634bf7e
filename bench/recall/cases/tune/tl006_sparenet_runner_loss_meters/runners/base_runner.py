import torch

from utils.average_meter import AverageMeter


class BaseRunner(object):
    def __init__(self, config, logger):
        self.config = config
        self.logger = logger
        self.epoch = 0
        self.train_data_loader, self.val_data_loader = self.build_datasets()
        self.build_models()
        self.build_optimizer()
        self.build_train_loss()

    def build_datasets(self):
        raise NotImplementedError

    def build_models(self):
        raise NotImplementedError

    def build_optimizer(self):
        raise NotImplementedError

    def build_train_loss(self):
        raise NotImplementedError

    def train_step(self, items):
        raise NotImplementedError

    def val_step(self, items):
        raise NotImplementedError

    def runner(self):
        for epoch_idx in range(self.config.TRAIN.N_EPOCHS):
            self.epoch = epoch_idx
            self.losses.reset()
            self.models.train()
            for batch_idx, items in enumerate(self.train_data_loader):
                self.train_step(items)
            self.logger.info("[Epoch %d] losses %s" % (epoch_idx, self.losses.avg()))

            self.test_losses.reset()
            self.models.eval()
            with torch.no_grad():
                for batch_idx, items in enumerate(self.val_data_loader):
                    self.val_step(items)
            self.logger.info("[Epoch %d] test losses %s" % (epoch_idx, self.test_losses.avg()))
