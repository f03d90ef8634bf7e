import time

import torch
from torch2trt import torch2trt

from detector import build_backbone, load_images


def main():
    backbone = build_backbone().cuda().eval()
    images = load_images("./samples").to("cuda")
    x = torch.ones((1, 3, 800, 1344)).cuda()
    backbone_trt = torch2trt(backbone, [x], fp16_mode=True)

    times = []
    for _ in range(100):
        torch.cuda.synchronize()
        start = time.time()
        f1, f2, f3, f4, fp, o1, o2, o3, o4, o5, b1, b2, b3, b4, b5 = backbone_trt(images.tensors)
        torch.cuda.synchronize()
        end = time.time()
        times.append(end - start)
    print("backbone: %.4f s" % (sum(times) / len(times)))


if __name__ == "__main__":
    main()
