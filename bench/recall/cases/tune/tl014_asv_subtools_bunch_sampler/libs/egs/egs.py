# -*- coding:utf-8 -*-
import torch
from torch.utils.data import DataLoader, Dataset

import libs.support.utils as utils


class ChunkEgs(Dataset):
    """Prepare chunk-egs for time-context-input-nnet (like xvector which sees short-time context)."""

    def __init__(self, egs_csv, io_status=True):
        self.chunk_position = []
        self.ark_path = []
        self.label = []
        with open(egs_csv) as f:
            next(f)
            for line in f:
                ark_path, position, label = line.split()
                self.ark_path.append(ark_path)
                self.chunk_position.append(position)
                self.label.append(int(label))
        self.io_status = io_status

    def __getitem__(self, index):
        egs = utils.read_chunk(self.ark_path[index], self.chunk_position[index])
        return torch.tensor(egs.T, dtype=torch.float32), self.label[index]

    def __len__(self):
        return len(self.label)


class BaseBunch():
    """BaseBunch:(trainset,[valid]).
    """
    def __init__(self, trainset, valid=None, use_fast_loader=False, max_prefetch=10,
                 batch_size=512, valid_batch_size=512, shuffle=True, num_workers=0, pin_memory=False,
                 drop_last=True):

        num_samples = len(trainset)
        num_gpu = 1
        self.train_sampler = None

        if utils.use_horovod():
            import horovod.torch as hvd
            self.train_sampler = torch.utils.data.distributed.DistributedSampler(
                trainset, num_replicas=hvd.size(), rank=hvd.rank(), shuffle=shuffle)
            num_gpu = hvd.size()
        elif utils.use_ddp():
            self.train_sampler = torch.utils.data.distributed.DistributedSampler(trainset, shuffle=shuffle)
            num_gpu = torch.distributed.get_world_size()

        train_loader = DataLoader(trainset, batch_size=batch_size, shuffle=(shuffle and self.train_sampler is None),
                                  num_workers=num_workers, pin_memory=pin_memory, drop_last=drop_last,
                                  sampler=self.train_sampler)

        self.num_batch_train = len(train_loader)

        if self.num_batch_train <= 0:
            raise ValueError("Expected num_batch of trainset > 0. There are your egs info: num_gpu={}, num_samples/gpu={}, "
                             "batch-size={}, drop_last={}.".format(num_gpu, len(trainset) / num_gpu, batch_size, drop_last))

        if valid is not None:
            valid_batch_size = min(valid_batch_size, len(valid))
            self.num_batch_valid = len(valid) // valid_batch_size + (len(valid) % valid_batch_size > 0)
            valid_loader = DataLoader(valid, batch_size=valid_batch_size, shuffle=False, num_workers=num_workers,
                                      pin_memory=pin_memory, drop_last=False)
        else:
            valid_loader = None
            self.num_batch_valid = 0

        self.train_loader = train_loader
        self.valid_loader = valid_loader

    @classmethod
    def get_bunch_from_egsdir(cls, egsdir: str, egs_params: dict = {}, data_loader_params_dict: dict = {}):
        trainset = ChunkEgs(egsdir + "/train.egs.csv", **egs_params)
        valid = ChunkEgs(egsdir + "/valid.egs.csv", **egs_params)
        return cls(trainset, valid, **data_loader_params_dict)
