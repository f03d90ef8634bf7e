import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class Bunch:
    def __init__(self, trainset, batch_size=64, shuffle=True, distributed=True):
        self.sampler = DistributedSampler(trainset, shuffle=shuffle) if distributed else None
        self.train_loader = DataLoader(trainset, batch_size=batch_size, sampler=self.sampler)


def eval_bunch(testset, shuffle=False):
    sampler = DistributedSampler(testset, shuffle=shuffle)
    return DataLoader(testset, sampler=sampler)
