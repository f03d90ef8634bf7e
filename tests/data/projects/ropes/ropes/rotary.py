import torch
from torch import nn


class FrameRotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, frame_indices, device):
        batch = frame_indices.shape[0]
        frame_indices = frame_indices.to(device=device, dtype=torch.float32)
        freqs = torch.arange(self.dim, device=device) / self.dim
        return (frame_indices[..., None] * freqs).expand(batch, -1, -1)
