import argparse
import os
import time

import torch
import torch.nn as nn
import torch.distributed as dist
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from apex import amp
from apex.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument('data', metavar='DIR')
parser.add_argument('--epochs', default=90, type=int)
parser.add_argument('-b', '--batch-size', default=64, type=int)
parser.add_argument('--lr', default=0.1, type=float)
parser.add_argument('--opt-level', type=str, default='O1')
parser.add_argument('--local_rank', default=0, type=int)


def train(train_loader, model, criterion, optimizer, epoch):
    model.train()
    end = time.time()
    for i, (input, target) in enumerate(train_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)
        loss = criterion(output, target)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        if i % 100 == 0 and dist.get_rank() == 0:
            print('Epoch {} [{}/{}] loss {:.4f} ({:.3f}s)'.format(epoch, i, len(train_loader), loss.item(),
                                                                 time.time() - end))
        end = time.time()


def main():
    args = parser.parse_args()
    dist.init_process_group(backend='nccl', init_method='env://')
    world_size = dist.get_world_size()

    model = models.resnet50()
    model = model.to(torch.device('cuda:0'))
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), args.lr * world_size, momentum=0.9, weight_decay=1e-4)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    model = DDP(model, delay_allreduce=True)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(os.path.join(args.data, 'train'), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=False,
                                               num_workers=4, pin_memory=True, sampler=train_sampler)

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        train(train_loader, model, criterion, optimizer, epoch)


if __name__ == '__main__':
    main()
