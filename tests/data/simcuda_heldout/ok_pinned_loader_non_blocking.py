"""Correct: a pinned-memory DataLoader with worker processes and non_blocking copies."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    device = torch.device("cuda")
    dataset = TensorDataset(torch.randn(96, 3, 8, 8), torch.randint(0, 10, (96,)))
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=2, pin_memory=True)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.train()
    for images, targets in loader:
        assert images.is_pinned()
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print("last loss", loss.item())


if __name__ == "__main__":
    main()
