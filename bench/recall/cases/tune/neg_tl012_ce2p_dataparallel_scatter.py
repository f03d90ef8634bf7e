import argparse

import torch
import torch.nn as nn
from torch.utils import data

from dataset.datasets import LIPDataSet
from networks.CE2P import Res_Deeplab
from utils.criterion import CriterionAll


def adjust_learning_rate(optimizer, i_iter, total_iters, base_lr):
    lr = base_lr * ((1 - float(i_iter) / total_iters) ** 0.9)
    optimizer.param_groups[0]['lr'] = lr
    return lr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--epochs', type=int, default=150)
    parser.add_argument('--learning-rate', type=float, default=7e-3)
    parser.add_argument('--gpu', type=str, default='0,1,2,3')
    args = parser.parse_args()

    deeplab = Res_Deeplab(num_classes=20)
    model = nn.DataParallel(deeplab)
    model.cuda()

    criterion = CriterionAll()
    criterion = nn.DataParallel(criterion)
    criterion.cuda()

    trainloader = data.DataLoader(LIPDataSet('./dataset/LIP', 'train', crop_size=(473, 473)),
                                  batch_size=args.batch_size * 4, shuffle=True, num_workers=2, pin_memory=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9, weight_decay=5e-4)
    total_iters = args.epochs * len(trainloader)
    for epoch in range(args.epochs):
        model.train()
        for i_iter, batch in enumerate(trainloader):
            i_iter += len(trainloader) * epoch
            lr = adjust_learning_rate(optimizer, i_iter, total_iters, args.learning_rate)

            images, labels, edges, _ = batch
            labels = labels.long().cuda(non_blocking=True)
            edges = edges.long().cuda(non_blocking=True)

            preds = model(images)

            loss = criterion(preds, [labels, edges])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    main()
