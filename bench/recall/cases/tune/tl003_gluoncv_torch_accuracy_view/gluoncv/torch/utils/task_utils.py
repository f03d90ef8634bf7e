"""Training and validation loops for video classification."""
import time

import torch

from .utils import AverageMeter, accuracy


def train_classification(base_iter, model, dataloader, epoch, criterion, optimizer, cfg, writer=None):
    """Task of training video classification"""
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()
    model.train()
    end = time.time()
    for step, data in enumerate(dataloader):
        base_iter = base_iter + 1

        train_batch = data[0].cuda()
        train_label = data[1].cuda()
        data_time.update(time.time() - end)

        outputs = model(train_batch)
        loss = criterion(outputs, train_label)
        prec1, prec5 = accuracy(outputs.data, train_label, topk=(1, 5))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        losses.update(loss.item(), train_label.size(0))
        top1.update(prec1.item(), train_label.size(0))
        top5.update(prec5.item(), train_label.size(0))

        batch_time.update(time.time() - end)
        end = time.time()

        if step % cfg.CONFIG.LOG.DISPLAY_FREQ == 0 and cfg.DDP_CONFIG.GPU_WORLD_RANK == 0:
            print('Epoch: [{0}][{1}/{2}]\tloss {loss.val:.4f}\tTop-1 {top1.val:.3f}'.format(
                epoch, step + 1, len(dataloader), loss=losses, top1=top1))
    return base_iter


def validation_classification(model, val_dataloader, epoch, criterion, cfg, writer):
    """Task of validating video classification"""
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()
    model.eval()

    with torch.no_grad():
        for step, data in enumerate(val_dataloader):
            val_batch = data[0].cuda()
            val_label = data[1].cuda()
            outputs = model(val_batch)

            loss = criterion(outputs, val_label)
            prec1a, prec5a = accuracy(outputs.data, val_label, topk=(1, 5))

            losses.update(loss.item(), val_batch.size(0))
            top1.update(prec1a.item(), val_batch.size(0))
            top5.update(prec5a.item(), val_batch.size(0))

    print('Epoch {} validation loss {:.4f} top-1 {:.3f} top-5 {:.3f}'.format(epoch, losses.avg, top1.avg, top5.avg))
    return top1.avg
