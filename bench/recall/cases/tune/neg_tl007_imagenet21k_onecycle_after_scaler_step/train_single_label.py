import argparse
import os

import timm
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim import lr_scheduler
from torchvision import datasets, transforms

from src_helper_functions.helper_functions import AverageMeter, accuracy, num_distrib, reduce_tensor

parser = argparse.ArgumentParser(description='PyTorch ImageNet21K Single-label Training')
parser.add_argument('--data_path', type=str)
parser.add_argument('--lr', default=3e-4, type=float)
parser.add_argument('--model_name', default='tresnet_m')
parser.add_argument('--num_classes', default=11221, type=int)
parser.add_argument('--image_size', default=224, type=int)
parser.add_argument('--batch_size', default=64, type=int)
parser.add_argument('--epochs', default=80, type=int)
parser.add_argument('--weight_decay', default=1e-4, type=float)
parser.add_argument("--local_rank", type=int)


def main():
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend='nccl', init_method='env://')

    model = timm.create_model(args.model_name, pretrained=False, num_classes=args.num_classes).cuda()
    model = DDP(model, device_ids=[args.local_rank], broadcast_buffers=False)

    tf = transforms.Compose([transforms.RandomResizedCrop(args.image_size), transforms.ToTensor()])
    train_dataset = datasets.ImageFolder(os.path.join(args.data_path, 'imagenet21k_train'), tf)
    val_dataset = datasets.ImageFolder(os.path.join(args.data_path, 'imagenet21k_val'), tf)
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=False,
                                               num_workers=8, pin_memory=True, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False,
                                             num_workers=8, pin_memory=True)

    train_21k(model, train_loader, train_sampler, val_loader, args)


def train_21k(model, train_loader, train_sampler, val_loader, args):
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.2)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    steps_per_epoch = len(train_loader)
    scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, steps_per_epoch=steps_per_epoch,
                                        epochs=args.epochs, pct_start=0.2)
    scaler = GradScaler()
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for i, (input, target) in enumerate(train_loader):
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            with autocast():  # mixed precision
                output = model(input)
                loss = loss_fn(output, target)

            model.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

        validate_21k(val_loader, model)


def validate_21k(val_loader, model):
    top1 = AverageMeter()
    model.eval()
    with torch.no_grad():
        for input, target in val_loader:
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            with autocast():
                logits = model(input).float()
            acc1 = accuracy(logits, target, topk=(1,))[0]
            acc1 = reduce_tensor(acc1, num_distrib())
            top1.update(acc1.item(), input.size(0))
    print('Validation: top1 %.2f' % top1.avg)
    return top1.avg


if __name__ == '__main__':
    main()
