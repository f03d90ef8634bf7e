import torch

from settings import settings


def run(net, batches):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    decay = torch.optim.lr_scheduler.StepLR(opt, step_size=5)
    for epoch in range(settings.EPOCHS):
        if epoch > settings.DECAY_FROM:
            decay.step()
        fit(net, batches, opt)
    for epoch in range(settings.EPOCHS):
        if epoch > settings.WARM_EPOCHS:
            decay.step()
        fit(net, batches, opt)


def fit(net, batches, opt):
    for features, labels in batches:
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(features), labels).backward()
        opt.step()
