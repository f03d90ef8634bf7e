import torch
from torch import nn
from torch.optim import SGD
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torchvision import datasets, transforms

from gdeep.pipeline import Pipeline


class DropoutClassifier(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.flatten = nn.Flatten()
        self.layers = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(512, n_classes),
        )

    def forward(self, x):
        return self.layers(self.flatten(x))


transform = transforms.ToTensor()
train_loader = DataLoader(datasets.FashionMNIST("data", train=True, download=True, transform=transform),
                          batch_size=64, shuffle=True)
test_loader = DataLoader(datasets.FashionMNIST("data", train=False, download=True, transform=transform),
                         batch_size=64)

writer = SummaryWriter()
model = DropoutClassifier()
pipe = Pipeline(model, (train_loader, test_loader), nn.CrossEntropyLoss(), writer)
pipe.train(SGD, 5, lr=1e-2)
