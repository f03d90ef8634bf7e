import argparse

import torch
import torch.nn as nn

from base_trainer import train
from base_validator import val
from dataset import courtDataset
from tracknet import BallTrackerNet

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch_size', type=int, default=2)
    parser.add_argument('--num_epochs', type=int, default=500)
    parser.add_argument('--lr', type=float, default=1e-5)
    parser.add_argument('--val_intervals', type=int, default=5)
    parser.add_argument('--steps_per_epoch', type=int, default=1000)
    args = parser.parse_args()

    train_loader = torch.utils.data.DataLoader(courtDataset('train'), batch_size=args.batch_size,
                                               shuffle=True, num_workers=1, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(courtDataset('val'), batch_size=args.batch_size,
                                             shuffle=False, num_workers=1, pin_memory=True)

    model = BallTrackerNet(out_channels=15)
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    model = model.to(device)

    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), args.lr, betas=(0.9, 0.999), weight_decay=0)

    for epoch in range(args.num_epochs):
        train_loss = train(model, train_loader, optimizer, criterion, device, epoch, args.steps_per_epoch)
        if (epoch > 0) & (epoch % args.val_intervals == 0):
            val_loss = val(model, val_loader, criterion, device, epoch)
            print('val loss = {}'.format(val_loss))
