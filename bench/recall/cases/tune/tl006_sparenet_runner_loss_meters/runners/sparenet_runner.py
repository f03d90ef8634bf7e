import torch

import utils.data_loaders
import utils.network_utils
from models.sparenet_generator import SpareNetGenerator
from cuda.chamfer_distance import ChamferDistance, ChamferDistanceMean
from runners.base_runner import BaseRunner
from utils.average_meter import AverageMeter


class sparenetRunner(BaseRunner):
    """Define the SpareNet runner class"""

    def __init__(self, config, logger):
        super().__init__(config, logger)
        self.losses = AverageMeter(["CoarseLoss", "RefineLoss"])
        self.test_losses = AverageMeter(["CoarseLoss", "RefineLoss"])
        self.loss = {}

    def build_datasets(self):
        train_dataset = utils.data_loaders.DATASET_LOADER_MAPPING[self.config.DATASET.TRAIN_DATASET](self.config)
        val_dataset = utils.data_loaders.DATASET_LOADER_MAPPING[self.config.DATASET.TEST_DATASET](self.config)
        train_loader = torch.utils.data.DataLoader(train_dataset.get_dataset(utils.data_loaders.DatasetSubset.TRAIN),
                                                   batch_size=self.config.TRAIN.BATCH_SIZE,
                                                   num_workers=self.config.CONST.NUM_WORKERS,
                                                   collate_fn=utils.data_loaders.collate_fn,
                                                   pin_memory=True, shuffle=True, drop_last=True)
        val_loader = torch.utils.data.DataLoader(val_dataset.get_dataset(utils.data_loaders.DatasetSubset.VAL),
                                                 batch_size=1, num_workers=self.config.CONST.NUM_WORKERS,
                                                 collate_fn=utils.data_loaders.collate_fn,
                                                 pin_memory=True, shuffle=False)
        return train_loader, val_loader

    def build_models(self):
        self.models = SpareNetGenerator(num_points=self.config.DATASET.N_POINTS,
                                        bottleneck_size=4096, n_primitives=self.config.NETWORK.N_PRIMITIVES)
        self.models = torch.nn.DataParallel(self.models).cuda()

    def build_optimizer(self):
        self.optimizers = torch.optim.Adam(filter(lambda p: p.requires_grad, self.models.parameters()),
                                           lr=self.config.TRAIN.LEARNING_RATE, betas=self.config.TRAIN.BETAS)

    def build_train_loss(self):
        self.chamfer_dist = torch.nn.DataParallel(ChamferDistance().cuda())
        self.chamfer_dist_mean = torch.nn.DataParallel(ChamferDistanceMean().cuda())

    def completion(self, data):
        coarse_ptcloud, refine_ptcloud = self.models(data)
        coarse_loss = self.chamfer_dist_mean(coarse_ptcloud, data["gtcloud"]).mean()
        refine_loss = self.chamfer_dist_mean(refine_ptcloud, data["gtcloud"]).mean()
        rec_loss = coarse_loss + refine_loss
        return rec_loss, refine_ptcloud, coarse_loss, refine_loss

    def train_step(self, items):
        _, (_, _, _, data) = items
        for k, v in data.items():
            data[k] = utils.network_utils.var_or_cuda(v)

        _loss, _, coarse_loss, refine_loss = self.completion(data)
        self.models.zero_grad()
        _loss.backward()
        self.optimizers.step()

        self.loss["coarse_loss"] = coarse_loss * 1000
        self.loss["refine_loss"] = refine_loss * 1000
        self.loss["rec_loss"] = _loss
        self.losses.update([self.loss["coarse_loss"], self.loss["refine_loss"]])

    def val_step(self, items):
        _, (_, _, _, data) = items
        for k, v in data.items():
            data[k] = utils.network_utils.var_or_cuda(v)

        _, refine_ptcloud, coarse_loss, refine_loss = self.completion(data)
        self.test_losses.update([coarse_loss.item() * 1000, refine_loss.item() * 1000])
