import numpy as np
from torch.utils.data import Dataset


class courtDataset(Dataset):
    def __init__(self, mode):
        self.mode = mode
        self.size = 100 if mode == 'train' else 20

    def __len__(self):
        return self.size

    def __getitem__(self, idx):
        img = np.zeros((3, 360, 640), dtype=np.float32)
        hm = np.zeros((15, 360, 640), dtype=np.float32)
        return img, hm
