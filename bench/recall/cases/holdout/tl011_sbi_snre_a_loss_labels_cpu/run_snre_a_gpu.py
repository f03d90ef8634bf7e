import torch

from sbi.inference.snre import SNRE_A
from sbi.utils import BoxUniform

prior = BoxUniform(low=-2 * torch.ones(3), high=2 * torch.ones(3))
theta = prior.sample((5000,))
x = theta + 0.1 * torch.randn_like(theta)

inference = SNRE_A(prior=prior, device="cuda")
ratio_estimator = inference.append_simulations(theta, x).train()
