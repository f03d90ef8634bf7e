import torch.nn.functional as F


def train_one_batch(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def train_one_batch_cleared(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def train_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        train_one_batch_cleared(model, optimizer, x, y)
