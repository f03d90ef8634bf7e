import argparse

import torch
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, Dataset

from models.fixmatch.fixmatch import FixMatch


class SSLDataset(Dataset):
    def __init__(self, base, strong=False):
        self.base = base
        self.weak = T.Compose([T.RandomHorizontalFlip(), T.ToTensor()])
        self.strong_tf = T.Compose([T.RandomHorizontalFlip(), T.RandAugment(), T.ToTensor()])
        self.strong = strong

    def __len__(self):
        return len(self.base)

    def __getitem__(self, idx):
        img, target = self.base[idx]
        if self.strong:
            return idx, self.weak(img), self.strong_tf(img)
        return idx, self.weak(img), target


def net_builder(num_classes):
    return torchvision.models.wide_resnet50_2(num_classes=num_classes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--amp', action='store_true')
    parser.add_argument('--clip', type=float, default=0)
    parser.add_argument('--num_train_iter', type=int, default=2 ** 20)
    args = parser.parse_args()

    torch.cuda.set_device(args.gpu)
    model = FixMatch(net_builder, 10, ema_m=0.999, T=0.5, p_cutoff=0.95, lambda_u=1.0)
    model.model = model.model.cuda(args.gpu)
    optimizer = torch.optim.SGD(model.model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.num_train_iter)
    model.set_optimizer(optimizer, scheduler)

    cifar = torchvision.datasets.CIFAR10('./data', train=True, download=True)
    cifar_test = torchvision.datasets.CIFAR10('./data', train=False, download=True)
    loader_dict = {
        'train_lb': DataLoader(SSLDataset(cifar), batch_size=64, shuffle=True, num_workers=4, pin_memory=True),
        'train_ulb': DataLoader(SSLDataset(cifar, strong=True), batch_size=448, shuffle=True, num_workers=4, pin_memory=True),
        'eval': DataLoader(SSLDataset(cifar_test), batch_size=1024, num_workers=4, pin_memory=True),
    }
    model.set_data_loader(loader_dict)
    model.train(args)


if __name__ == '__main__':
    main()
