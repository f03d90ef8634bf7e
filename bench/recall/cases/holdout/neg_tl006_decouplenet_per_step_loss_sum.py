import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.decouplenet import DecoupleNet
from util import dataset, transform
from util.util import AverageMeter, intersectionAndUnionGPU, poly_learning_rate


def train(train_loader, target_loader, model, optimizer, epoch, args):
    batch_time = AverageMeter()
    loss_meter = AverageMeter()
    model.train()
    end = time.time()
    max_iter = args.epochs * len(train_loader)
    target_iter = iter(target_loader)
    for i, (input, target) in enumerate(train_loader):
        try:
            input_t, _ = next(target_iter)
        except StopIteration:
            target_iter = iter(target_loader)
            input_t, _ = next(target_iter)
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        input_t = input_t.cuda(non_blocking=True)

        output, aux_outputs, domain_logits = model(input, input_t)

        loss = 0
        loss += F.cross_entropy(output, target, ignore_index=args.ignore_label)
        for aux in aux_outputs:
            loss += args.aux_weight * F.cross_entropy(aux, target, ignore_index=args.ignore_label)

        domain_loss = 0
        for logits, domain in zip(domain_logits, (0, 1)):
            labels = torch.full((logits.shape[0],), domain, device=logits.device, dtype=torch.long)
            domain_loss += F.cross_entropy(logits, labels)
        loss = loss + args.domain_weight * domain_loss

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        current_iter = epoch * len(train_loader) + i + 1
        current_lr = poly_learning_rate(args.base_lr, current_iter, max_iter, power=args.power)
        for index in range(len(optimizer.param_groups)):
            optimizer.param_groups[index]['lr'] = current_lr * (1 if index == 0 else 10)

        loss_meter.update(loss.item(), input.size(0))
        batch_time.update(time.time() - end)
        end = time.time()
        if (i + 1) % args.print_freq == 0:
            print('Epoch: [{}/{}][{}/{}] Loss {:.4f}'.format(epoch + 1, args.epochs, i + 1, len(train_loader),
                                                              loss_meter.avg))
    return loss_meter.avg


def main(args):
    model = DecoupleNet(num_classes=args.classes).cuda()
    optimizer = torch.optim.SGD([{'params': model.backbone.parameters()},
                                 {'params': model.head.parameters()}],
                                lr=args.base_lr, momentum=args.momentum, weight_decay=args.weight_decay)
    train_loader = torch.utils.data.DataLoader(dataset.SemData(split='train', data_root=args.data_root),
                                               batch_size=args.batch_size, shuffle=True, num_workers=8,
                                               pin_memory=True, drop_last=True)
    target_loader = torch.utils.data.DataLoader(dataset.SemData(split='train', data_root=args.target_root),
                                                batch_size=args.batch_size, shuffle=True, num_workers=8,
                                                pin_memory=True, drop_last=True)
    for epoch in range(args.epochs):
        train(train_loader, target_loader, model, optimizer, epoch, args)
