import numpy as np
import torch

import tntorch as tn
from tntorch.gd import optimize

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# Fit a 100x100 picture with a tensor train of rank 10.
picture = torch.tensor(np.load("picture.npy"), dtype=torch.float32, device=device)
t = tn.rand(picture.shape, ranks_tt=10, requires_grad=True, device=device)


def loss(t):
    return tn.relative_error(picture, t) ** 2


history = optimize(t, loss, max_iter=1000, print_freq=100)
print("final relative error", history[-1] ** 0.5)
