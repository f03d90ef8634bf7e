"""
(Testing FPS) Pixel Difference Networks for Efficient Edge Detection.
"""

from __future__ import absolute_import
from __future__ import print_function
from __future__ import division

import argparse
import os
import time
import models
from edge_dataloader import BSDS_VOCLoader, Multicue_Loader, NYUD_Loader
from torch.utils.data import DataLoader

import torch

parser = argparse.ArgumentParser(description='PyTorch Diff Convolutional Networks (FPS)')
parser.add_argument('--datadir', type=str, default='../data', help='dir to the dataset')
parser.add_argument('--dataset', type=str, default='BSDS', help='BSDS, Multicue or NYUD')
parser.add_argument('--model', type=str, default='baseline', help='model to test')
parser.add_argument('--config', type=str, default='nas-all', help='model configuration')
parser.add_argument('--gpu', type=str, default='', help='gpus available')
parser.add_argument('-j', '--workers', type=int, default=4, help='number of data loading workers')
parser.add_argument('--eta', type=float, default=0.3, help='threshold to determine the ground truth')

args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu


def main():
    global args
    args.use_cuda = torch.cuda.is_available()
    args.dataset = list(args.dataset.strip().split('-'))

    model = getattr(models, args.model)(args)
    if args.use_cuda:
        model = torch.nn.DataParallel(model).cuda()
        print('cuda is used, with %d gpu devices' % torch.cuda.device_count())
    else:
        print('cuda is not used, the running might be slow')

    if 'BSDS' == args.dataset[0]:
        test_dataset = BSDS_VOCLoader(root=args.datadir, split="test", threshold=args.eta)
    elif 'Multicue' == args.dataset[0]:
        test_dataset = Multicue_Loader(root=args.datadir, split="test", threshold=args.eta, setting=args.dataset[1:])
    elif 'NYUD' == args.dataset[0]:
        test_dataset = NYUD_Loader(root=args.datadir, split="test", setting=args.dataset[1:])
    else:
        raise ValueError("unrecognized dataset setting")
    test_loader = DataLoader(test_dataset, batch_size=1, num_workers=args.workers, shuffle=False)

    test(test_loader, model, args)


def test(test_loader, model, args):

    model.eval()

    end = time.perf_counter()
    for idx, (image, img_name) in enumerate(test_loader):

        with torch.no_grad():
            image = image.cuda() if args.use_cuda else image
            _, _, H, W = image.shape
            results = model(image)
    end = time.perf_counter() - end
    print('fps: %f' % (len(test_loader) / end))


if __name__ == '__main__':
    main()
    print('done')
