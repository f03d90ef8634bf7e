import time

import torch

from models.RSTT import RSTT

device = torch.device('cuda')
model = RSTT(embed_dim=96, depths=[8, 8, 8, 8]).to(device)
model.load_state_dict(torch.load('checkpoints/RSTT-L.pth'), strict=True)
model.eval()
inputs = torch.rand(1, 4, 3, 64, 112).to(device)

torch.cuda.synchronize()
start = time.time()
n = 100
for i in range(n):
    with torch.no_grad():
        outputs = model(inputs)
torch.cuda.synchronize()
end = time.time()
print('fps =', n * 7.0 / (end - start))
