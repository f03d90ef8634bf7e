import torch

from loops.epochs import fit_epoch


def run(net, batches, epochs):
    opt = torch.optim.Adam(net.parameters())
    other = torch.optim.Adam(net.parameters())
    decay = torch.optim.lr_scheduler.StepLR(opt, step_size=5)
    warm = torch.optim.lr_scheduler.StepLR(other, step_size=5)
    for epoch in range(epochs):
        decay.step()
        fit_epoch(net, batches, opt=opt)
    for epoch in range(epochs):
        warm.step()
        fit_epoch(net, batches, opt=opt)
