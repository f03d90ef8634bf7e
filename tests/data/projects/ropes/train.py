import torch

from ropes.model import VideoModel

model = VideoModel(16).cuda()
print(model(torch.randn(2, 8, 16, device="cuda")).shape)
