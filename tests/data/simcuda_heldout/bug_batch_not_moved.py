"""Buggy: the model is on the GPU but the batch from the loader never is."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda"

dataset = TensorDataset(torch.randn(64, 10), torch.randint(0, 3, (64,)))
loader = DataLoader(dataset, batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

for epoch in range(2):
    for inputs, labels in loader:
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
