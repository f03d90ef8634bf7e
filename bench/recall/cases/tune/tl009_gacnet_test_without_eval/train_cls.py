import argparse
import datetime
import os

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from data_utils.ModelNetDataLoader import ModelNetDataLoader, load_data
from model.GACNet_cls import GACNet
from utils import test


def parse_args():
    parser = argparse.ArgumentParser('GACNet')
    parser.add_argument('--batchsize', type=int, default=24)
    parser.add_argument('--epoch', type=int, default=200)
    parser.add_argument('--learning_rate', type=float, default=0.001)
    parser.add_argument('--num_points', type=int, default=1024)
    parser.add_argument('--dropout', type=float, default=0.5)
    return parser.parse_args()


def main(args):
    train_data, train_label, test_data, test_label = load_data('./data/modelnet40_ply_hdf5_2048/', classification=True)
    train_dataset = ModelNetDataLoader(train_data, train_label)
    test_dataset = ModelNetDataLoader(test_data, test_label)
    trainDataLoader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batchsize, shuffle=True)
    testDataLoader = torch.utils.data.DataLoader(test_dataset, batch_size=args.batchsize, shuffle=False)

    model = GACNet(40, dropout=args.dropout).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999),
                                 eps=1e-08, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    best_tst_accuracy = 0.0

    for epoch in range(args.epoch):
        scheduler.step()
        for batch_id, data in tqdm(enumerate(trainDataLoader, 0), total=len(trainDataLoader), smoothing=0.9):
            points, target = data
            target = target[:, 0]
            points = points.transpose(2, 1)
            points, target = points.cuda(), target.cuda()
            optimizer.zero_grad()
            model = model.train()
            pred = model(points)
            loss = F.nll_loss(pred, target.long())
            loss.backward()
            optimizer.step()

        acc = test(model, testDataLoader)
        print('\r Loss: %f' % loss.data)
        print('\r Test %s: %f' % ('Accuracy', acc))
        if acc >= best_tst_accuracy:
            best_tst_accuracy = acc
            torch.save(model.state_dict(), 'checkpoints/GACNet-%.4f-%04d.pth' % (acc, epoch))


if __name__ == '__main__':
    main(parse_args())
