import time

import torch
import torchvision

from .timers import record_time, record_time_synced, timeit, timeit_synced
from .workloads import read_labels, run_model, run_model_synced


def main():
    model = torchvision.models.resnet18().cuda().eval()
    images = torch.randn(8, 3, 224, 224, device="cuda")
    with torch.no_grad():
        print("resnet18", timeit(model, images))
        print("resnet18 synced", timeit_synced(model, images))
    print("sorting", timeit(sorted, list(range(1000))))


def _measure(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def compare():
    model = torchvision.models.resnet18().cuda().eval()
    images = torch.randn(8, 3, 224, 224, device="cuda")
    with torch.no_grad():
        print("resnet18", _measure(run_model, model, images))
        print("resnet18 synced", _measure(run_model_synced, model, images))
    print("labels", _measure(read_labels, "labels.txt"))


def blocks():
    model = torchvision.models.resnet18().cuda().eval()
    images = torch.randn(8, 3, 224, 224, device="cuda")
    with torch.no_grad():
        with record_time("resnet18"):
            model(images)
        with record_time_synced("resnet18 synced"):
            model(images)
        with record_time("resnet18 read"):
            print(model(images).argmax(1).tolist())


if __name__ == "__main__":
    main()
    compare()
    blocks()
