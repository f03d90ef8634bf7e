import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from apex import amp
from apex.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from dataset import TrainDataset
from model import Net

parser = argparse.ArgumentParser()
parser.add_argument('--epochs', type=int, default=90)
parser.add_argument('--batch-size', type=int, default=64)
parser.add_argument('--lr', type=float, default=0.1)
args = parser.parse_args()

# launched with mpirun: one process per GPU on the node
os.environ['RANK'] = os.environ.get('OMPI_COMM_WORLD_RANK', '0')
os.environ['WORLD_SIZE'] = os.environ.get('OMPI_COMM_WORLD_SIZE', '1')
dist.init_process_group(backend='nccl', init_method='env://')

model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
model, optimizer = amp.initialize(model, optimizer, opt_level='O1')
model = DDP(model)

dataset = TrainDataset('./data')
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=8, pin_memory=True)

for epoch in range(args.epochs):
    sampler.set_epoch(epoch)
    for images, target in loader:
        images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
        loss = F.cross_entropy(model(images), target)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
