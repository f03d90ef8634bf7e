"""Timing GPU work with the wall clock: once without synchronising (the time measured is
the time to queue the kernels), once correctly."""
import time

import torch
from torch import nn


def unsynchronized(x):
    start = time.perf_counter()
    for _ in range(20):
        x = torch.tanh(x @ x)
    return time.perf_counter() - start  # line: clock


def synchronized(x):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(20):
        x = torch.tanh(x @ x)
    torch.cuda.synchronize()
    return time.perf_counter() - start  # line: synced-clock


def main():
    x = torch.randn(4096, 4096, device="cuda") / 64
    model = nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(100):
        print(f"unsynchronized {unsynchronized(x):.4f} s, synchronized {synchronized(x):.4f} s")
        optimizer.zero_grad()
        model(torch.randn(4, 8, device="cuda")).sum().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
