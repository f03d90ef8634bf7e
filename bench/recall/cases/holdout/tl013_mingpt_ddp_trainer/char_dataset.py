from dataclasses import dataclass

import torch
from torch.utils.data import Dataset


@dataclass
class DataConfig:
    path: str = None
    block_size: int = None
    train_split: float = None


class CharDataset(Dataset):
    def __init__(self, data_cfg: DataConfig):
        data = open(data_cfg.path, 'r').read()
        chars = sorted(list(set(data)))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.vocab_size = len(chars)
        self.block_size = data_cfg.block_size
        self.data = data

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        chunk = self.data[idx:idx + self.block_size + 1]
        dix = [self.stoi[s] for s in chunk]
        x = torch.tensor(dix[:-1], dtype=torch.long)
        y = torch.tensor(dix[1:], dtype=torch.long)
        return x, y
