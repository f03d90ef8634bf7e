import torch

from .models import build_cpu_model, build_model


def train(train_loader, epochs):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build_model(10, device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for images, targets in train_loader:
            loss = torch.nn.functional.cross_entropy(model(images), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def train_on_host(train_loader):
    model = build_cpu_model(10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, targets in train_loader:
        loss = torch.nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
