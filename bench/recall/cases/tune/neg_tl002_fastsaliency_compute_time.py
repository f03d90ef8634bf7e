# The author's speed test from the FastSaliency thread (SAMNet), with the model import
# the answer shows.
import time

import numpy as np
import torch


def computeTime(model, device='cuda'):
    inputs = torch.randn(30, 3, 336, 336)
    if device == 'cuda':
        model = model.cuda()
        inputs = inputs.cuda()

    model.eval()

    time_spent = []
    for idx in range(100):
        start_time = time.time()
        with torch.no_grad():
            _ = model(inputs)

        if device == 'cuda':
            torch.cuda.synchronize()  # wait for cuda to finish (cuda is asynchronous!)
        if idx > 10:
            time_spent.append(time.time() - start_time)
    print('Average speed: {:.4f} fps'.format(30 / np.mean(time_spent)))


torch.backends.cudnn.benchmark = True

from Models.SAMNet import FastSal as net

model = net()

computeTime(model)
