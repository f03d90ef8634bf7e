import argparse
import time

import numpy as np
import torch
from torch.nn import BatchNorm2d

from encoding.models import get_segmentation_model


class Options():
    def __init__(self):
        parser = argparse.ArgumentParser(description='PyTorch Segmentation')
        parser.add_argument('--model', type=str, default='fcn')
        parser.add_argument('--backbone', type=str, default='resnet50')
        parser.add_argument('--dataset', type=str, default='ade20k')
        parser.add_argument('--base-size', type=int, default=520)
        parser.add_argument('--crop-size', type=int, default=480)
        self.parser = parser

    def parse(self):
        return self.parser.parse_args()


if __name__ == "__main__":
    args = Options().parse()
    model = get_segmentation_model(args.model, dataset=args.dataset, backbone=args.backbone,
                                   norm_layer=BatchNorm2d, base_size=args.base_size, crop_size=args.crop_size)
    num_parameters = sum([l.nelement() for l in model.pretrained.parameters()])
    print(num_parameters)
    num_parameters = sum([l.nelement() for l in model.head.parameters()])
    print(num_parameters)

    model.cuda()
    model.eval()

    x = torch.Tensor(1, 3, 512, 512).cuda()

    N = 10
    with torch.no_grad():
        for _ in range(N):
            out = model(x)

        result = []
        for _ in range(10):
            st = time.time()
            for _ in range(N):
                out = model(x)
            result.append(N / (time.time() - st))
            print(N / (time.time() - st))
    print(np.mean(result), np.std(result))
