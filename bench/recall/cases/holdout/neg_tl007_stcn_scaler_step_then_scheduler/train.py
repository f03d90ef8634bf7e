import torch
import torch.distributed as distributed
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from dataset.static_dataset import StaticTransformDataset
from model.model import STCNModel
from util.hyper_para import HyperParameters

para = HyperParameters()
para.parse()

distributed.init_process_group(backend="nccl")
local_rank = torch.distributed.get_rank()
world_size = torch.distributed.get_world_size()
torch.cuda.set_device(local_rank)

model = STCNModel(para, local_rank=local_rank, world_size=world_size).train()

train_dataset = StaticTransformDataset('../static', method=1)
train_sampler = DistributedSampler(train_dataset, rank=local_rank, shuffle=True)
train_loader = DataLoader(train_dataset, para['batch_size'], sampler=train_sampler, num_workers=8,
                          drop_last=True, pin_memory=True)

total_iter = 0
total_epoch = para['iterations'] // len(train_loader) + 1
for e in range(total_epoch):
    train_sampler.set_epoch(e)
    model.train()
    for data in train_loader:
        model.do_pass(data, total_iter)
        total_iter += 1
        if total_iter >= para['iterations']:
            break
