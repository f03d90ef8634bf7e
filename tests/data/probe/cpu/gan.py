"""A GAN: the generator's backward flows into the discriminator's gradients after the
discriminator's step; the discriminator clears them before its next step."""
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
discriminator = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for _ in range(100):
    real = torch.randn(16, 8)
    fake = generator(torch.randn(16, 4))
    opt_d.zero_grad()
    loss_d = bce(discriminator(real), torch.ones(16, 1)) + bce(discriminator(fake.detach()), torch.zeros(16, 1))
    loss_d.backward()
    opt_d.step()  # line: step-d
    opt_g.zero_grad()
    loss_g = bce(discriminator(fake), torch.ones(16, 1))
    loss_g.backward()
    opt_g.step()  # line: step-g
