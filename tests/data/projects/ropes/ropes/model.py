import torch
from torch import nn

from .rotary import FrameRotary


class VideoModel(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.rope = FrameRotary(dim)

    def forward(self, hidden_states, frame_indices=None):
        if frame_indices is None:
            frame_indices = torch.arange(hidden_states.shape[1]).unsqueeze(0)
        angles = self.rope(frame_indices=frame_indices, device=hidden_states.device)
        return self.proj(hidden_states) * angles.cos()
