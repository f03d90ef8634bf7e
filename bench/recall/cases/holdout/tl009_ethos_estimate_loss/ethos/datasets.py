import numpy as np
import torch


class TimelineDataset:
    """Tokenized patient timelines in one memory-mapped array (reduced)."""

    def __init__(self, path, block_size):
        self.tokens = np.load(path, mmap_mode="r")
        self.block_size = block_size

    def get_batch(self, batch_size, device):
        ix = np.random.randint(0, len(self.tokens) - self.block_size - 1, batch_size)
        x = torch.stack([torch.from_numpy(self.tokens[i:i + self.block_size].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(self.tokens[i + 1:i + 1 + self.block_size].astype(np.int64)) for i in ix])
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
