import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from cp_dataset import CPDataLoader, CPDataset
from networks import GMM


def get_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="GMM")
    parser.add_argument("-b", "--batch-size", type=int, default=4)
    parser.add_argument("--dataroot", default="data")
    parser.add_argument("--datamode", default="train")
    parser.add_argument("--stage", default="GMM")
    parser.add_argument("--fine_width", type=int, default=192)
    parser.add_argument("--fine_height", type=int, default=256)
    parser.add_argument("--grid_size", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.0001)
    parser.add_argument("--keep_step", type=int, default=100000)
    parser.add_argument("--decay_step", type=int, default=100000)
    return parser.parse_args()


def train_gmm(opt, train_loader, model):
    model.cuda()
    model.train()

    criterionL1 = nn.L1Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=opt.lr, betas=(0.5, 0.999))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda=lambda step: 1.0 - max(0, step - opt.keep_step) / float(opt.decay_step + 1))

    for step in range(opt.keep_step + opt.decay_step):
        inputs = train_loader.next_batch()

        agnostic = inputs["agnostic"].cuda()
        c = inputs["cloth"].cuda()
        im_c = inputs["parse_cloth"].cuda()

        grid, theta = model(agnostic, c)
        warped_cloth = F.grid_sample(c, grid, padding_mode="border")

        loss = criterionL1(warped_cloth, im_c)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()

        if (step + 1) % 50 == 0:
            print("step: %8d, loss: %4f" % (step + 1, loss.item()), flush=True)


def main():
    opt = get_opt()
    train_dataset = CPDataset(opt)
    train_loader = CPDataLoader(opt, train_dataset)
    model = GMM(opt)
    train_gmm(opt, train_loader, model)
    torch.save(model.cpu().state_dict(), os.path.join("checkpoints", opt.name, "gmm_final.pth"))


if __name__ == "__main__":
    main()
