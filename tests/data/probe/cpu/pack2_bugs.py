"""Pack-2 bugs in other spellings than the fixtures', one section per bug, each with its
own model and optimizer."""
import torch
from torch import nn


def model_zero_grad_before_step():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(4):
        model(torch.randn(16, 8)).pow(2).mean().backward()
        model.zero_grad()  # line: model-clear
        optimizer.step()


def per_iteration_schedule_first():
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=10)
    for _ in range(4):
        optimizer.zero_grad()
        model(torch.randn(4, 8)).pow(2).mean().backward()
        scheduler.step()  # line: schedule-first
        optimizer.step()


def clip_after_step():
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        optimizer.zero_grad()
        model(torch.randn(4, 8)).pow(2).mean().backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # line: clip-after-step


def clip_before_backward():
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        optimizer.zero_grad()
        loss = model(torch.randn(4, 8)).pow(2).mean()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # line: clip-before-backward
        loss.backward()
        optimizer.step()


def inline_evaluation_in_train_mode():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.randn(16, 8)).pow(2).mean().backward()
            optimizer.step()
        with torch.no_grad():  # line: inline-eval
            score = model(torch.randn(16, 8)).mean().item()
        print(f"epoch {epoch}: {score:.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    model_zero_grad_before_step()
    per_iteration_schedule_first()
    clip_after_step()
    clip_before_backward()
    inline_evaluation_in_train_mode()
