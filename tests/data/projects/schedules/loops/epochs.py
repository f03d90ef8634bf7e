import torch


def fit_epoch(net, batches, opt):
    for features, labels in batches:
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(features), labels).backward()
        opt.step()
