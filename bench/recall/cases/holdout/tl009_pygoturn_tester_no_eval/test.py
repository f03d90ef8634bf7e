import os
import argparse

import numpy as np
import torch
from torch.autograd import Variable
from torchvision import transforms
from skimage import io
import matplotlib.pyplot as plt
import matplotlib.patches as patches

import model
from helper import ToTensor, Normalize, CropPrev, Rescale, inverse_transform

use_gpu = torch.cuda.is_available()
parser = argparse.ArgumentParser(description='GOTURN Testing')
parser.add_argument('-weights', '--model-weights', type=str, help='path to trained model')
parser.add_argument('-data', '--data-directory', default='../data/OTB/Girl', type=str)


class TesterOTB:
    """Tester for OTB formatted sequences"""

    def __init__(self, root_dir, model_path):
        self.root_dir = root_dir
        self.transform = transforms.Compose([Normalize(), ToTensor()])
        self.model = model.GoNet()
        if use_gpu:
            self.model = self.model.cuda()
        self.model.load_state_dict(torch.load(model_path))
        frames = sorted(os.listdir(root_dir + '/img'))
        frames = [root_dir + "/img/" + frame for frame in frames]
        self.len = len(frames) - 1
        self.x = np.array([[frames[i], frames[i + 1]] for i in range(self.len)])
        with open(root_dir + '/groundtruth_rect.txt') as f:
            init_bbox = [float(v) for v in f.readline().strip().split('\t')]
        self.prev_rect = np.array([init_bbox[0], init_bbox[1],
                                   init_bbox[0] + init_bbox[2], init_bbox[1] + init_bbox[3]])

    def __getitem__(self, idx):
        return self.transform(self.get_sample(idx))

    def get_sample(self, idx):
        prev = io.imread(self.x[idx][0])
        curr = io.imread(self.x[idx][1])
        transform_prev = transforms.Compose([CropPrev(128), Rescale((227, 227))])
        prev_img = transform_prev({'image': prev, 'bb': self.prev_rect})['image']
        curr_img = transform_prev({'image': curr, 'bb': self.prev_rect})['image']
        return {'previmg': prev_img, 'currimg': curr_img}

    def get_rect(self, sample):
        x1, x2 = sample['previmg'], sample['currimg']
        if use_gpu:
            x1, x2 = Variable(x1.cuda()), Variable(x2.cuda())
        else:
            x1, x2 = Variable(x1), Variable(x2)
        x1 = x1[None, :, :, :]
        x2 = x2[None, :, :, :]
        y = self.model(x1, x2)
        bb = y.data.cpu().numpy().transpose((1, 0))
        bb = list(bb[:, 0] * 10)
        return inverse_transform(bb, self.prev_rect)

    def test(self):
        fig, ax = plt.subplots(1)
        for i in range(self.len):
            sample = self[i]
            bb = self.get_rect(sample)
            im = io.imread(self.x[i][1])
            ax.clear()
            ax.imshow(im)
            rect = patches.Rectangle((bb[0], bb[1]), bb[2] - bb[0], bb[3] - bb[1],
                                     linewidth=1, edgecolor='r', facecolor='none')
            ax.add_patch(rect)
            self.prev_rect = bb
        plt.show()


def main():
    args = parser.parse_args()
    tester = TesterOTB(args.data_directory, args.model_weights)
    tester.test()


if __name__ == "__main__":
    main()
