import argparse
import os

import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from apex import amp
from apex.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("--local_rank", default=0, type=int)
parser.add_argument("--resume", default="", type=str)
parser.add_argument("--batch-size", default=64, type=int)
parser.add_argument("--epochs", default=90, type=int)
parser.add_argument("--lr", default=0.1, type=float)
args = parser.parse_args()

model = models.resnet50()
if args.resume and os.path.isfile(args.resume):
    # The checkpoint was saved by rank 0 from cuda:0 and is loaded before the device is set
    checkpoint = torch.load(args.resume)
    model.load_state_dict(checkpoint["state_dict"])

torch.cuda.set_device(args.local_rank)
torch.distributed.init_process_group(backend="nccl", init_method="env://")

model = model.cuda()
criterion = nn.CrossEntropyLoss().cuda()
optimizer = optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
model = DDP(model, delay_allreduce=True)

train_dataset = datasets.ImageFolder(
    os.path.join(args.data, "train"),
    transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                        transforms.ToTensor()]))
train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=False,
                                           num_workers=4, pin_memory=True, sampler=train_sampler)

for epoch in range(args.epochs):
    train_sampler.set_epoch(epoch)
    model.train()
    for i, (input, target) in enumerate(train_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)
        loss = criterion(output, target)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        if i % 100 == 0 and args.local_rank == 0:
            print(f"epoch {epoch} iter {i} loss {loss.item():.4f}")
