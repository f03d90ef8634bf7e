"""Train an invertible ResNet on CIFAR-10 (classification or density estimation)."""
import argparse
import os

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim as optim
import torchvision
import torchvision.transforms as transforms
import visdom

from models.utils_cifar import train, test, std, mean, get_hms
from models.conv_iResNet import conv_iResNet as iResNet

parser = argparse.ArgumentParser(description='Train i-ResNet/ResNet on Cifar')
parser.add_argument('-densityEstimation', '--densityEstimation', dest='densityEstimation', action='store_true')
parser.add_argument('--lr', default=0.1, type=float)
parser.add_argument('--coeff', default=0.9, type=float)
parser.add_argument('--epochs', default=200, type=int)
parser.add_argument('--batch', default=128, type=int)
parser.add_argument('--warmup_epochs', default=10, type=int)
parser.add_argument('--eval_every', default=10, type=int)
parser.add_argument('--log_every', default=10, type=int)
parser.add_argument('--log_verbose', action='store_true')
parser.add_argument('--save_dir', default='results', type=str)
parser.add_argument('--dataset', default='cifar10', type=str)


def main():
    args = parser.parse_args()
    use_cuda = torch.cuda.is_available()

    transform_train = transforms.Compose([
        transforms.Pad(4, padding_mode="symmetric"),
        transforms.RandomCrop(32),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean[args.dataset], std[args.dataset]),
    ])
    transform_test = transforms.Compose([
        transforms.ToTensor(),
        transforms.Normalize(mean[args.dataset], std[args.dataset]),
    ])
    trainset = torchvision.datasets.CIFAR10(root='./data', train=True, download=True, transform=transform_train)
    testset = torchvision.datasets.CIFAR10(root='./data', train=False, download=True, transform=transform_test)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=args.batch, shuffle=True, num_workers=2)
    testloader = torch.utils.data.DataLoader(testset, batch_size=args.batch, shuffle=False, num_workers=2)

    model = iResNet(nBlocks=[7, 7, 7], nStrides=[1, 2, 2], nChannels=[32, 64, 128],
                    nClasses=10, init_ds=2, inj_pad=13, in_shape=(3, 32, 32),
                    coeff=args.coeff, density_estimation=args.densityEstimation)
    if use_cuda:
        model.cuda()
        model = torch.nn.DataParallel(model, range(torch.cuda.device_count()))
        cudnn.benchmark = True

    viz = visdom.Visdom(port=8097)
    os.makedirs(args.save_dir, exist_ok=True)
    train_log = open(os.path.join(args.save_dir, "train_log.txt"), 'w')
    test_log = open(os.path.join(args.save_dir, "test_log.txt"), 'w')

    optimizer = optim.Adamax(model.parameters(), lr=args.lr) if args.densityEstimation \
        else optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)

    best_result = -float('inf')
    for epoch in range(1, 1 + args.epochs):
        train(args, model, optimizer, epoch, trainloader, trainset, viz, use_cuda, train_log)
        if epoch == 1 or epoch % args.eval_every == 0:
            best_result = test(best_result, args, model, epoch, testloader, viz, use_cuda, test_log)

    print('Best objective: %.4f' % best_result)


if __name__ == '__main__':
    main()
