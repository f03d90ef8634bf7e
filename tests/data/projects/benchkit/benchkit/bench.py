import torch
import torchvision

from .timers import timeit, timeit_synced


def main():
    model = torchvision.models.resnet18().cuda().eval()
    images = torch.randn(8, 3, 224, 224, device="cuda")
    with torch.no_grad():
        print("resnet18", timeit(model, images))
        print("resnet18 synced", timeit_synced(model, images))
    print("sorting", timeit(sorted, list(range(1000))))


if __name__ == "__main__":
    main()
