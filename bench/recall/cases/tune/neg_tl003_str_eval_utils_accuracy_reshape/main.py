import argparse

import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms

from trainers.default import train, validate

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="imagenet")
parser.add_argument("--gpu", type=int, default=0)
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--lr", type=float, default=0.1)


def main():
    args = parser.parse_args()
    torch.cuda.set_device(args.gpu)
    model = torchvision.models.resnet50().cuda(args.gpu)
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = torchvision.datasets.ImageFolder(args.data + "/train", tf)
    val_set = torchvision.datasets.ImageFolder(args.data + "/val", tf)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=256, shuffle=True, num_workers=8, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=256, shuffle=False, num_workers=8, pin_memory=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs)

    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, args)
        acc1, acc5 = validate(val_loader, model, criterion, args)
        scheduler.step()
        print(epoch, acc1, acc5)


if __name__ == "__main__":
    main()
