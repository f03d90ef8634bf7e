"""Buggy: the inputs are moved to the GPU, the labels are not."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    data = TensorDataset(torch.randn(80, 20), torch.randint(0, 5, (80,)))
    loader = DataLoader(data, batch_size=20)
    model = Classifier().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, (x, y) in enumerate(loader):
        x = x.to(device)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
