import torch.nn.functional as F


def train_step(model, optimizer, images, targets):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), targets)
    loss.backward()
    optimizer.step()
    return loss


def train_step_value(model, optimizer, images, targets):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
