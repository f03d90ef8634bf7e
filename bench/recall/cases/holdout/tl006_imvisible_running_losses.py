import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader

from dataset import TrafficLightDataset
from network import LytNet

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
train_loader = DataLoader(TrafficLightDataset(csv_file='training.csv', img_dir='images/'), batch_size=32,
                          shuffle=True, num_workers=4)
net = LytNet().to(device)
criterion_ce = nn.CrossEntropyLoss()
criterion_mse = nn.MSELoss()
optimizer = optim.Adam(net.parameters(), lr=0.001, weight_decay=0.0005)
MSE_weight = 0.5

for epoch in range(300):
    net.train()
    running_loss = 0.0
    running_loss_MSE = 0.0
    running_loss_cross_entropy = 0.0
    for i, data in enumerate(train_loader, 0):
        inp, points, mode = data['image'].to(device), data['points'].to(device), data['mode'].to(device)
        optimizer.zero_grad()
        pred_classes, pred_direc = net(inp)
        cross_entropy = criterion_ce(pred_classes, mode)
        MSE = criterion_mse(pred_direc, points)
        loss = cross_entropy + MSE_weight * MSE
        loss.backward()
        optimizer.step()
        running_loss += loss
        running_loss_MSE += MSE
        running_loss_cross_entropy += cross_entropy
    print('epoch %d loss: %.3f (mse %.3f, ce %.3f)' % (epoch + 1, running_loss / (i + 1),
                                                      running_loss_MSE / (i + 1),
                                                      running_loss_cross_entropy / (i + 1)))
