"""A DataLoader with worker processes, stopped by the step limit: no worker may outlive
the probe. Each worker writes its pid to $PROBE_TEST_PIDS."""
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def record_pid(worker_id):
    folder = os.environ.get("PROBE_TEST_PIDS")
    if folder:
        with open(os.path.join(folder, f"worker-{os.getpid()}"), "w") as marker:
            marker.write(str(os.getpid()))


def main():
    data = TensorDataset(torch.randn(4096, 8), torch.randn(4096, 1))
    loader = DataLoader(data, batch_size=16, num_workers=2, worker_init_fn=record_pid, persistent_workers=True)
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(10):
        for x, y in loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()


if __name__ == "__main__":
    main()
