import argparse

import torch
from torch import nn, optim
from torch.nn import functional as F
from torch.utils import data
from torchvision import datasets, transforms
from tqdm import tqdm

from distributed import get_rank, reduce_loss_dict, synchronize
from model import Discriminator, Generator


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)

    if shuffle:
        return data.RandomSampler(dataset)

    else:
        return data.SequentialSampler(dataset)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def sample_data(loader):
    while True:
        for batch in loader:
            yield batch


def d_logistic_loss(real_pred, fake_pred):
    return (F.softplus(-real_pred) + F.softplus(fake_pred)).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


def train(args, loader, generator, discriminator, g_optim, d_optim, device):
    loader = sample_data(loader)

    pbar = range(args.iter)
    if get_rank() == 0:
        pbar = tqdm(pbar, initial=args.start_iter, dynamic_ncols=True, smoothing=0.01)

    for idx in pbar:
        i = idx + args.start_iter
        if i > args.iter:
            print("Done!")
            break

        real_img = next(loader)
        real_img = real_img.to(device)

        requires_grad(generator, False)
        requires_grad(discriminator, True)
        noise = [torch.randn(args.batch, args.latent, device=device)]
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        real_pred = discriminator(real_img)
        d_loss = d_logistic_loss(real_pred, fake_pred)

        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()

        requires_grad(generator, True)
        requires_grad(discriminator, False)
        noise = [torch.randn(args.batch, args.latent, device=device)]
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        g_loss = g_nonsaturating_loss(fake_pred)

        generator.zero_grad()
        g_loss.backward()
        g_optim.step()

        loss_reduced = reduce_loss_dict({"d": d_loss.detach(), "g": g_loss.detach()})
        if get_rank() == 0:
            pbar.set_description(f"d: {loss_reduced['d'].item():.4f}; g: {loss_reduced['g'].item():.4f}")


class ImageOnly(data.Dataset):
    def __init__(self, root, transform):
        self.inner = datasets.ImageFolder(root, transform=transform)

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, index):
        return self.inner[index][0]


if __name__ == "__main__":
    device = "cuda"
    parser = argparse.ArgumentParser(description="StyleGAN2 trainer")
    parser.add_argument("path", type=str)
    parser.add_argument("--iter", type=int, default=800000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()

    n_gpu = torch.cuda.device_count()
    args.distributed = n_gpu > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        synchronize()

    args.latent = 512
    args.n_mlp = 8
    args.start_iter = 0

    generator = Generator(args.size, args.latent, args.n_mlp).to(device)
    discriminator = Discriminator(args.size).to(device)
    g_optim = optim.Adam(generator.parameters(), lr=args.lr, betas=(0, 0.99))
    d_optim = optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0, 0.99))

    if args.distributed:
        generator = nn.parallel.DistributedDataParallel(generator, device_ids=[args.local_rank],
                                                        output_device=args.local_rank, broadcast_buffers=False)
        discriminator = nn.parallel.DistributedDataParallel(discriminator, device_ids=[args.local_rank],
                                                            output_device=args.local_rank, broadcast_buffers=False)

    transform = transforms.Compose([
        transforms.Resize(args.size), transforms.CenterCrop(args.size),
        transforms.RandomHorizontalFlip(), transforms.ToTensor(),
        transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5), inplace=True),
    ])
    dataset = ImageOnly(args.path, transform)
    loader = data.DataLoader(
        dataset,
        batch_size=args.batch,
        sampler=data_sampler(dataset, shuffle=True, distributed=args.distributed),
        drop_last=True,
    )

    train(args, loader, generator, discriminator, g_optim, d_optim, device)
