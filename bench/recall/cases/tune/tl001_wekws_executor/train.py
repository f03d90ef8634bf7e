import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from executor import Executor
from dataset import KwsDataset


def main():
    parser = argparse.ArgumentParser(description='training your network')
    parser.add_argument('--num_epochs', type=int, default=80)
    parser.add_argument('--gpu', type=int, default=-1)
    args = parser.parse_args()

    use_cuda = args.gpu >= 0 and torch.cuda.is_available()
    device = torch.device('cuda' if use_cuda else 'cpu')
    train_data_loader = DataLoader(KwsDataset('train'), batch_size=None, num_workers=4)
    cv_data_loader = DataLoader(KwsDataset('cv'), batch_size=None, num_workers=4)

    model = nn.GRU(40, 2, batch_first=True).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    executor = Executor()
    for epoch in range(args.num_epochs):
        info = {'epoch': epoch, 'grad_clip': 5.0, 'criterion': 'max_pooling'}
        executor.train(model, optimizer, train_data_loader, device, None, info)
        cv_loss = executor.cv(model, cv_data_loader, device, info)
        print(epoch, cv_loss)


if __name__ == '__main__':
    main()
