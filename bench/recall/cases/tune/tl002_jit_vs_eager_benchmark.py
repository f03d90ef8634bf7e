import time

import torch
import torchvision

from model import Net

device = torch.device('cuda')
model = Net().to(device).eval()
example = torch.rand(1, 3, 224, 224, device=device)
traced_script_module = torch.jit.trace(model, example)

with torch.no_grad():
    for _ in range(10):
        model(example)
        traced_script_module(example)

    start = time.time()
    for _ in range(100):
        output = model(example)
    eager_time = (time.time() - start) / 100

    start = time.time()
    for _ in range(100):
        output = traced_script_module(example)
    jit_time = (time.time() - start) / 100

print('eager: %.3f ms, torch script: %.3f ms' % (eager_time * 1000, jit_time * 1000))
