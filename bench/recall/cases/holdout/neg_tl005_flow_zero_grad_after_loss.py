import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data as data


class MixtureCDFFlow(nn.Module):
    def __init__(self, n_components=4):
        super().__init__()
        self.loc = nn.Parameter(torch.randn(n_components), requires_grad=True)
        self.log_scale = nn.Parameter(torch.zeros(n_components), requires_grad=True)
        self.weight_logits = nn.Parameter(torch.zeros(n_components), requires_grad=True)
        self.base_dist = torch.distributions.Uniform(0.0, 1.0)

    def flow(self, x):
        x = x.unsqueeze(1).repeat(1, self.loc.shape[0])
        dist = torch.distributions.Normal(self.loc, self.log_scale.exp())
        z = (dist.cdf(x) * self.weight_logits.softmax(dim=0)).sum(dim=1)
        log_det = (dist.log_prob(x).exp() * self.weight_logits.softmax(dim=0)).sum(dim=1).log()
        return z, log_det

    def nll(self, x):
        z, log_det = self.flow(x)
        return -(self.base_dist.log_prob(z.clamp(1e-5, 1 - 1e-5)) + log_det).mean()


def train(model, train_loader, optimizer):
    model.train()
    for x in train_loader:
        x = x.float()
        loss = model.nll(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def eval_loss(model, data_loader):
    model.eval()
    total_loss = 0
    with torch.no_grad():
        for x in data_loader:
            x = x.float()
            loss = model.nll(x)
            total_loss += loss * x.shape[0]
        avg_loss = total_loss / len(data_loader.dataset)
    return avg_loss.item()


def train_epochs(model, train_loader, test_loader, train_args):
    epochs, lr = train_args['epochs'], train_args['lr']
    optimizer = optim.Adam(model.parameters(), lr=lr)
    train_losses, test_losses = [], [eval_loss(model, test_loader)]
    for epoch in range(epochs):
        model.train()
        train(model, train_loader, optimizer)
        test_losses.append(eval_loss(model, test_loader))
    return train_losses, test_losses


if __name__ == '__main__':
    data_np = np.concatenate([np.random.randn(1000) * 0.5 - 1, np.random.randn(1000) * 0.5 + 1])
    train_loader = data.DataLoader(data_np, batch_size=128, shuffle=True)
    test_loader = data.DataLoader(data_np, batch_size=128)
    train_epochs(MixtureCDFFlow(), train_loader, test_loader, dict(epochs=50, lr=5e-3))
