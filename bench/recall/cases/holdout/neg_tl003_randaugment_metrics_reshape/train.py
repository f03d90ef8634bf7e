import torch
from torch import nn

from metrics import Accumulator, accuracy


def run_epoch(model, loader, loss_fn, optimizer, desc_default='', epoch=0, scheduler=None):
    metrics = Accumulator()
    cnt = 0
    for data, label in loader:
        data, label = data.cuda(), label.cuda()
        if optimizer:
            optimizer.zero_grad()
        preds = model(data)
        loss = loss_fn(preds, label)
        if optimizer:
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5)
            optimizer.step()
        top1, top5 = accuracy(preds, label, (1, 5))
        metrics.add_dict({
            'loss': loss.item() * len(data),
            'top1': top1.item() * len(data),
            'top5': top5.item() * len(data),
        })
        cnt += len(data)
        if scheduler is not None:
            scheduler.step(epoch - 1 + float(cnt) / len(loader.dataset))
    return metrics


def train_and_eval(model, trainloader, testloader, max_epoch=200):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max_epoch, eta_min=0.)
    model = model.cuda()
    for epoch in range(1, max_epoch + 1):
        model.train()
        rs_train = run_epoch(model, trainloader, criterion, optimizer, desc_default='train', epoch=epoch,
                             scheduler=scheduler)
        model.eval()
        with torch.no_grad():
            rs_test = run_epoch(model, testloader, criterion, None, desc_default='*test', epoch=epoch)
        print(epoch, rs_train['top1'], rs_test['top1'])
