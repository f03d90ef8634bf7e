import torch

from tables.model import Encoder

model = Encoder(100, 32).cuda()
print(model(torch.randint(0, 100, (2, 8), device="cuda")).shape)
