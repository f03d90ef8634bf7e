import argparse

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from models import GAN

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=50)
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--lr", type=float, default=2e-4)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
train_loader = DataLoader(datasets.MNIST("./data", train=True, download=True, transform=transform),
                          batch_size=args.batch_size, shuffle=True, num_workers=2)
gan = GAN(image_size=28, channels=1, latent_dims=100, device=device, lr=args.lr)

for epoch in range(args.epochs):
    for i, data in enumerate(train_loader):
        D_x, D_G_z1, errD, D_G_z2 = gan.step(data)
        if i % 100 == 0:
            print(f"[{epoch}/{args.epochs}][{i}] Loss_D: {errD.item():.4f} D(x): {D_x:.4f} D(G(z)): {D_G_z1:.4f}/{D_G_z2:.4f}")
