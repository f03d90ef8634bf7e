import os

import numpy as np
import torch
import torch.utils.data as data


class PartDataset(data.Dataset):
    def __init__(self, root, npoints=2500, classification=False, train=True):
        self.npoints = npoints
        self.root = root
        self.classification = classification
        self.catfile = os.path.join(self.root, 'synsetoffset2category.txt')
        self.cat = {}
        with open(self.catfile, 'r') as f:
            for line in f:
                ls = line.strip().split()
                self.cat[ls[0]] = ls[1]
        self.classes = dict(zip(sorted(self.cat), range(len(self.cat))))
        self.datapath = []
        for item in sorted(self.cat):
            dir_point = os.path.join(self.root, self.cat[item], 'points')
            fns = sorted(os.listdir(dir_point))
            fns = fns[:int(len(fns) * 0.9)] if train else fns[int(len(fns) * 0.9):]
            for fn in fns:
                self.datapath.append((item, os.path.join(dir_point, fn)))

    def __getitem__(self, index):
        fn = self.datapath[index]
        cls = self.classes[fn[0]]
        point_set = np.loadtxt(fn[1]).astype(np.float32)
        choice = np.random.choice(len(point_set), self.npoints, replace=True)
        point_set = torch.from_numpy(point_set[choice, :])
        cls = torch.from_numpy(np.array([cls]).astype(np.int64))
        return point_set, cls

    def __len__(self):
        return len(self.datapath)
