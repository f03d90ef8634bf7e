import argparse
import os

import numpy as np
import torch
import torch.optim as optim

import assessors
import generators
import transformations.pytorch as transformations
import utils.common
import utils.pytorch

parser = argparse.ArgumentParser()
parser.add_argument('--gpu_id', type=str, default=0)
parser.add_argument('--num_samples', type=int, default="400000")
parser.add_argument('--train_alpha_a', type=float, default=-0.5)
parser.add_argument('--train_alpha_b', type=float, default=0.5)
parser.add_argument('--assessor', type=str, default="emonet")
args = parser.parse_args()
opts = vars(args)

device = torch.device("cuda:" + str(opts["gpu_id"]) if torch.cuda.is_available() else "cpu")
checkpoint_dir = "./checkpoints"
loss_file = os.path.join(checkpoint_dir, "losses.txt")
dim_z = 140
vocab_size = 1000

transformation = transformations.OneDirection(dim_z, vocab_size).to(device)
generator = generators.biggan256()
for p in generator.parameters():
    p.requires_grad = False
generator.eval()
generator = generator.to(device)

assessor = getattr(assessors, opts['assessor'])(True)
for p in assessor.parameters():
    p.requires_grad = False
assessor.eval()
assessor.to(device)

optimizer = optim.Adam(transformation.parameters(), lr=0.0002)
losses = utils.common.AverageMeter(name='Loss')

batch_size = 4
train_alpha_a = opts["train_alpha_a"]
train_alpha_b = opts["train_alpha_b"]
num_samples = opts["num_samples"]
np.random.seed(seed=0)
zs = utils.common.truncated_z_sample(num_samples, dim_z, 1)
ys = np.random.randint(0, vocab_size, size=zs.shape[0])

for batch_start in range(0, num_samples, batch_size):
    s = slice(batch_start, min(num_samples, batch_start + batch_size))
    z = torch.from_numpy(zs[s]).type(torch.FloatTensor).to(device)
    y = torch.from_numpy(ys[s]).to(device)
    step_sizes = (train_alpha_b - train_alpha_a) * np.random.random(size=(batch_size)) + train_alpha_a
    step_sizes_broadcast = np.repeat(step_sizes, dim_z).reshape([batch_size, dim_z])
    step_sizes_broadcast = torch.from_numpy(step_sizes_broadcast).type(torch.FloatTensor).to(device)

    # ganalyze steps
    gan_images = generator(z, utils.pytorch.one_hot(y))
    gan_images = utils.pytorch.denorm(gan_images)
    out_scores = assessor(gan_images).to(device).float()
    target_scores = out_scores + torch.from_numpy(step_sizes).to(device).float()

    z_transformed = transformation.transform(z, utils.pytorch.one_hot(y), step_sizes_broadcast)
    gan_images_transformed = generator(z_transformed, utils.pytorch.one_hot(y))
    gan_images_transformed = utils.pytorch.denorm(gan_images_transformed)
    out_scores_transformed = assessor(gan_images_transformed).to(device).float()

    # compute loss
    loss = transformation.compute_loss(out_scores_transformed, target_scores, batch_start, loss_file)

    # backwards
    loss.backward()
    optimizer.step()

    losses.update(loss.item(), batch_size)
    print(f'[{batch_start}/{num_samples}] {losses}')
