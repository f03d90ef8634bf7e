import time

import torch
import torch.nn as nn

from util import AverageMeter, intersectionAndUnionGPU


def train(train_loader, model, optimizer, epoch, args):
    model.train()
    for i, (input, target) in enumerate(train_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output, main_loss, aux_loss = model(input, target)
        loss = main_loss + args.aux_weight * aux_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(val_loader, model, criterion, args):
    batch_time = AverageMeter()
    data_time = AverageMeter()
    loss_meter = AverageMeter()
    intersection_meter = AverageMeter()
    union_meter = AverageMeter()

    model.eval()
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        data_time.update(time.time() - end)
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)
        loss = criterion(output, target)

        n = input.size(0)
        loss = torch.mean(loss)
        output = output.max(1)[1]
        intersection, union, target = intersectionAndUnionGPU(output, target, args.classes, args.ignore_label)
        intersection, union = intersection.cpu().numpy(), union.cpu().numpy()
        intersection_meter.update(intersection), union_meter.update(union)
        loss_meter.update(loss.item(), n)
        batch_time.update(time.time() - end)
        end = time.time()
    iou_class = intersection_meter.sum / (union_meter.sum + 1e-10)
    return loss_meter.avg, iou_class.mean()


def main_worker(args, model, train_loader, val_loader):
    criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=args.momentum)
    model = model.cuda()
    for epoch in range(args.start_epoch, args.epochs):
        train(train_loader, model, optimizer, epoch, args)
        if args.evaluate:
            loss_val, miou_val = validate(val_loader, model, criterion, args)
