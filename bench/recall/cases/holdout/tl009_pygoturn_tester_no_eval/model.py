import torch
import torch.nn as nn
from torchvision import models


class GoNet(nn.Module):
    """Two CaffeNet towers (frozen) and a fully connected regressor with dropout."""

    def __init__(self):
        super(GoNet, self).__init__()
        caffenet = models.alexnet(pretrained=True)
        self.convnet = nn.Sequential(*list(caffenet.children())[:-1])
        for param in self.convnet.parameters():
            param.requires_grad = False
        self.classifier = nn.Sequential(
            nn.Linear(256 * 6 * 6 * 2, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(4096, 4),
        )
        self.weight_init()

    def weight_init(self):
        for m in self.classifier.modules():
            if isinstance(m, nn.Linear):
                m.weight.data.normal_(0, 0.005)
                m.bias.data.fill_(1)

    def forward(self, x, y):
        x1 = self.convnet(x)
        x1 = x1.view(x.size(0), 256 * 6 * 6)
        x2 = self.convnet(y)
        x2 = x2.view(x.size(0), 256 * 6 * 6)
        x = torch.cat((x1, x2), 1)
        x = self.classifier(x)
        return x
