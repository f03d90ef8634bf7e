import torch

from pipeline import Fitter, image_loaders

train, val = image_loaders(train_set, val_set)
fitter = Fitter(net, torch.optim.SGD(net.parameters(), lr=0.1), loss, torch.device("cuda"))
for _ in range(10):
    fitter.epoch(train)
