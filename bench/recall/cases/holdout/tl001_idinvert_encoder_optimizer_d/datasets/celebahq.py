import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset


class CelebaHQ(Dataset):
    def __init__(self, dataset_args, train=True):
        split = 'train' if train else 'val'
        self.root = os.path.join(dataset_args['data_root'], split)
        self.files = sorted(os.listdir(self.root))
        self.size = dataset_args.get('resolution', 256)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        image = Image.open(os.path.join(self.root, self.files[index])).convert('RGB')
        image = image.resize((self.size, self.size))
        array = np.asarray(image, dtype=np.float32) / 127.5 - 1.0
        return torch.from_numpy(array).permute(2, 0, 1)
