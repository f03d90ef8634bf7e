import os
import time

import numpy as np
import torch
from torch.nn.functional import softmax
from torch.optim.lr_scheduler import ReduceLROnPlateau, StepLR
from torch.utils.data import DataLoader

from datasets import UNetTrainDataset, UNetValDataset
from loss import combined_loss
from metrics import get_metrics
from unet import UNetGNRes


def train_unet(train_dir, val_dir, output_dir, epochs=80, batch_size=4, lr=0.01):
    device = torch.device('cuda')
    cnn = UNetGNRes().to(device)
    optimizer = torch.optim.SGD(cnn.parameters(), lr=lr, momentum=0.99, nesterov=True)
    scheduler = StepLR(optimizer, step_size=30, gamma=0.3)
    train_loader = DataLoader(UNetTrainDataset(train_dir), batch_size=batch_size, shuffle=True,
                              num_workers=12, drop_last=True, pin_memory=True)
    val_loader = DataLoader(UNetValDataset(val_dir), batch_size=1, shuffle=False, num_workers=4,
                            pin_memory=True)
    best_f1 = 0
    for epoch in range(epochs):
        scheduler.step()
        epoch_start = time.time()
        cnn.train()
        tps = fps = fns = 0
        for photo_tiles, foreground_tiles, defined_tiles in train_loader:
            photo_tiles = photo_tiles.to(device)
            foreground_tiles = foreground_tiles.to(device)
            defined_tiles = defined_tiles.to(device)
            optimizer.zero_grad()
            outputs = cnn(photo_tiles)
            outputs[:, 0] *= defined_tiles
            outputs[:, 1] *= defined_tiles
            loss = combined_loss(outputs, foreground_tiles)
            loss.backward()
            optimizer.step()
            softmaxed = softmax(outputs, 1)
            predicted = softmaxed[:, 1, :] > 0.5
            predicted = predicted.view(-1).int()
            foreground_tiles = foreground_tiles.view(-1).int()
            tps += torch.sum(predicted & foreground_tiles).item()
            fps += torch.sum(predicted & ~foreground_tiles).item()
            fns += torch.sum(~predicted & foreground_tiles).item()

        cnn.eval()
        with torch.no_grad():
            val_metrics = get_metrics(cnn, val_loader, device)
        print(epoch, time.time() - epoch_start, tps, fps, fns, val_metrics['f1'])
        if val_metrics['f1'] > best_f1:
            best_f1 = val_metrics['f1']
            torch.save(cnn.state_dict(), os.path.join(output_dir, 'best.pkl'))
