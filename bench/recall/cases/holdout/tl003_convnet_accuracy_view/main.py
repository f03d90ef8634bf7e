import torch
import torch.nn as nn

from data import get_loader
from models import alexnet
from trainer import Trainer


def main():
    device = 'cuda'
    model = alexnet(num_classes=1000).to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    trainer = Trainer(model, criterion, optimizer, device_ids=[0], device=device, print_freq=10)
    train_loader = get_loader('imagenet', split='train', batch_size=256, workers=8)
    val_loader = get_loader('imagenet', split='val', batch_size=256, workers=8)
    for epoch in range(90):
        train_results = trainer.train(train_loader)
        val_results = trainer.validate(val_loader)
        print(epoch, train_results, val_results)


if __name__ == '__main__':
    main()
