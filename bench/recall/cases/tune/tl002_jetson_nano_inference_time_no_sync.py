"""Measure MobileNetV2 inference time on a Jetson Nano (and a GTX 1080 Ti for comparison)."""
import time

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import transforms

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

preprocess = transforms.Compose([
    transforms.Resize(256),
    transforms.CenterCrop(224),
    transforms.ToTensor(),
    transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


class TwoHeadMobileNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        backbone = torchvision.models.mobilenet_v2(pretrained=True)
        self.features = backbone.features
        self.classifier = backbone.classifier
        self.aux = torch.nn.Linear(1280, 4)

    def forward(self, x):
        f = self.features(x).mean([2, 3])
        return self.classifier(f), self.aux(f)


def load_image(path):
    img = Image.open(path).convert("RGB")
    return preprocess(img).unsqueeze(0)


def main():
    model = TwoHeadMobileNet().to(device)
    model.eval()
    img2 = load_image("test.jpg").to(device)

    times = []
    with torch.no_grad():
        for _ in range(10):
            model(img2)
        for _ in range(100):
            start = time.time()
            pred, _ = model(img2)
            times.append(time.time() - start)
    times = np.array(times)
    print("inference: mean %.2f ms, std %.2f ms, min %.2f ms, max %.2f ms" % (
        times.mean() * 1000, times.std() * 1000, times.min() * 1000, times.max() * 1000))
    print("top-1:", pred.argmax(dim=1).item())


if __name__ == "__main__":
    main()
