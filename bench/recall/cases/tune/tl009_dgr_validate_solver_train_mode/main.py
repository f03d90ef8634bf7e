# main.py reduced to the permutated-MNIST experiment (argument parsing and the other
# experiments trimmed; gan.WGAN and data.get_dataset are imported and not included).
import torch

import data
import dgr
from gan import WGAN
from models import CNN
from train import train

cuda = torch.cuda.is_available()
train_datasets = [data.get_dataset('mnist-permutated', permutation=p) for p in data.permutations(5)]
test_datasets = [data.get_dataset('mnist-permutated', train=False, permutation=p) for p in data.permutations(5)]

solver = CNN(image_size=32, image_channel_size=1, classes=10, depth=5, channel_size=1024, reducing_layers=3)
generator = WGAN(z_size=100, image_size=32, image_channel_size=1, c_channel_size=64, g_channel_size=64)
scholar = dgr.Scholar('permutated-mnist', generator=generator, solver=solver)
if cuda:
    scholar.cuda()

train(scholar, train_datasets, test_datasets, replay_mode='generative-replay', cuda=cuda)
