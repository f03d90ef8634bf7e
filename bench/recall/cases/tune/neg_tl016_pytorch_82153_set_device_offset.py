import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim import Adam
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = '8880'
    gpus = 2
    offset = 2
    mp.spawn(train, nprocs=gpus, args=(gpus, offset))


def train(gpu, world_size, offset):
    _ = torch.manual_seed(0)
    rank = gpu
    dist.init_process_group(
        backend='nccl',
        init_method='env://',
        world_size=world_size,
        rank=rank)
    torch.cuda.set_device(gpu + offset)
    device = torch.device('cuda:' + str(gpu + offset))
    d = 256
    model = nn.Linear(d, 1)
    n_train = 1024
    x_train = torch.randn((n_train, d))
    y_train = torch.randn((n_train, 1))
    ds_train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(ds_train, num_replicas=world_size, rank=rank)
    dl_train = DataLoader(dataset=ds_train,
                          sampler=sampler,
                          batch_size=32,
                          num_workers=1)

    optimizer = Adam(model.parameters(), lr=1e-3)
    model = model.to(device)
    model = DDP(model, device_ids=[gpu + offset])
    loss_func = nn.MSELoss()
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for i, batch in enumerate(dl_train):
            src, tgt = batch
            src = src.to(device)
            tgt = tgt.to(device)
            optimizer.zero_grad()
            loss = loss_func(model(src), tgt)
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(epoch, loss.item())


if __name__ == '__main__':
    main()
