import torch
import torch.nn.functional as F

from trainkit.evaluation import evaluate, validate
from trainkit.steps import train_one_batch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(8)]

# Gradients are never cleared: the helper steps without zero_grad().
for x, y in loader:
    train_one_batch(model, optimizer, x, y)

# evaluate() leaves the model in eval mode for every later epoch.
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    evaluate(model, loader)

# validate() runs the model under no_grad() but in train mode.
for epoch in range(3):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    validate(model, loader)
