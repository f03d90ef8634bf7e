import time

import numpy as np
import torch


def measure_detailed_inference_timing(model, sample, model_device, transfer_to_device_fn=torch.Tensor.to,
                                      num_runs=100):
    timings = []
    with torch.no_grad():
        for _ in range(num_runs):
            start = time.time()
            s = transfer_to_device_fn(sample, model_device)
            model_output = model(s)
            model_output = model_output.to("cpu")
            end = time.time()
            timings.append(end - start)
    return np.mean(timings), np.std(timings)


if __name__ == "__main__":
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3), torch.nn.ReLU()).cuda().eval()
    print(measure_detailed_inference_timing(model, torch.randn(1, 3, 224, 224), "cuda"))
