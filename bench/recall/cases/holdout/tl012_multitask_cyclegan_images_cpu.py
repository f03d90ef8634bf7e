import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from dataloader import CelebA
from model import Discriminator, Generator

parser = argparse.ArgumentParser()
parser.add_argument('--root', type=str, default='data/celeba')
parser.add_argument('--batch_size', type=int, default=16)
parser.add_argument('--num_epochs', type=int, default=20)
parser.add_argument('--lr', type=float, default=2e-4)
args = parser.parse_args()

G_m2f, G_f2m = Generator().cuda(), Generator().cuda()
D_m, D_f = Discriminator().cuda(), Discriminator().cuda()
optim_G = torch.optim.Adam(list(G_m2f.parameters()) + list(G_f2m.parameters()), lr=args.lr, betas=(0.5, 0.999))
optim_D = torch.optim.Adam(list(D_m.parameters()) + list(D_f.parameters()), lr=args.lr, betas=(0.5, 0.999))
criterion_gan = nn.MSELoss()
criterion_cycle = nn.L1Loss()
criterion_cls = nn.CrossEntropyLoss()

male_loader = DataLoader(CelebA(args.root, gender='male'), batch_size=args.batch_size, shuffle=True, num_workers=4)
female_loader = DataLoader(CelebA(args.root, gender='female'), batch_size=args.batch_size, shuffle=True,
                           num_workers=4)

for epoch in range(args.num_epochs):
    for (male_img, male_label), (female_img, female_label) in zip(male_loader, female_loader):
        # ---------- generators ----------
        optim_G.zero_grad()
        fake_female, cls_f = G_m2f(male_img)
        fake_male, cls_m = G_f2m(female_img)
        rec_male, _ = G_f2m(fake_female)
        rec_female, _ = G_m2f(fake_male)
        d_ff, d_fm = D_f(fake_female), D_m(fake_male)
        loss_gan = criterion_gan(d_ff, torch.ones_like(d_ff)) + criterion_gan(d_fm, torch.ones_like(d_fm))
        loss_cycle = criterion_cycle(rec_male, male_img) + criterion_cycle(rec_female, female_img)
        loss_cls = criterion_cls(cls_f, male_label) + criterion_cls(cls_m, female_label)
        loss_G = loss_gan + 10 * loss_cycle + loss_cls
        loss_G.backward()
        optim_G.step()

        # ---------- discriminators ----------
        optim_D.zero_grad()
        d_rf, d_rm = D_f(female_img), D_m(male_img)
        d_ff, d_fm = D_f(fake_female.detach()), D_m(fake_male.detach())
        loss_D = (criterion_gan(d_rf, torch.ones_like(d_rf)) + criterion_gan(d_ff, torch.zeros_like(d_ff)) +
                  criterion_gan(d_rm, torch.ones_like(d_rm)) + criterion_gan(d_fm, torch.zeros_like(d_fm)))
        loss_D.backward()
        optim_D.step()
    print('epoch %d: loss_G %.4f loss_D %.4f' % (epoch, loss_G.item(), loss_D.item()))
