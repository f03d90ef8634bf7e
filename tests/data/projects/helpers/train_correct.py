import torch
import torch.nn.functional as F

from trainkit.evaluation import evaluate, evaluate_and_restore, validate
from trainkit.steps import train_epoch, train_one_batch_cleared

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(8)]

for x, y in loader:
    train_one_batch_cleared(model, optimizer, x, y)

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    evaluate_and_restore(model, loader)

# train_epoch() calls model.train() itself.
for epoch in range(3):
    train_epoch(model, loader, optimizer)
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    evaluate(model, loader)

for epoch in range(3):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    model.eval()
    validate(model, loader)
