"""The training loop that `probe_overhead.py` times: a small MLP classifier on random
data, with the usual per-step bookkeeping (gradient clipping, a per-step learning-rate
schedule, a periodic evaluation). Prints the CPU time of the loop itself (one
thread, so that other processes on the machine do not blur the comparison)."""
import sys
import time

import torch
from torch import nn

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 300


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=STEPS)
    loss_fn = nn.CrossEntropyLoss()
    data = [(torch.randn(64, 64), torch.randint(0, 10, (64,))) for _ in range(32)]
    start = time.process_time()
    running = 0.0
    for step in range(STEPS):
        x, y = data[step % len(data)]
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        scheduler.step()
        running += loss.item()
        if (step + 1) % 100 == 0:
            model.eval()
            with torch.no_grad():
                correct = sum(int((model(x).argmax(1) == y).sum()) for x, y in data[:4])
            model.train()
            print(f"step {step + 1}: loss {running / 100:.3f}, accuracy {correct / 256:.2f}")
            running = 0.0
    print(f"loop_seconds={time.process_time() - start:.6f}")


if __name__ == "__main__":
    main()
