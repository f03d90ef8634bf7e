import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import transforms
from torchvision.datasets import MNIST
from torchvision.models.resnet import BasicBlock, ResNet


class MnistResNet(ResNet):
    def __init__(self):
        super().__init__(BasicBlock, [2, 2, 2, 2], num_classes=10)
        self.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)

    def forward(self, x):
        return torch.softmax(super().forward(x), dim=-1)


def get_data_loaders(train_batch_size, val_batch_size):
    mnist = MNIST(download=True, train=True, root=".").train_data.float()
    data_transform = transforms.Compose([
        transforms.Resize((224, 224)), transforms.ToTensor(),
        transforms.Normalize((mnist.mean() / 255,), (mnist.std() / 255,)),
    ])
    train_loader = DataLoader(MNIST(download=True, root=".", transform=data_transform, train=True),
                              batch_size=train_batch_size, shuffle=True)
    val_loader = DataLoader(MNIST(download=False, root=".", transform=data_transform, train=False),
                            batch_size=val_batch_size, shuffle=False)
    return train_loader, val_loader


device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
model = MnistResNet().to(device)
epochs = 5
train_loader, val_loader = get_data_loaders(256, 256)
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.Adadelta(model.parameters())

for epoch in range(epochs):
    total_loss = 0
    model.train()
    for i, data in enumerate(train_loader):
        X, y = data[0].to(device), data[1].to(device)
        model.zero_grad()
        outputs = model(X)
        loss = loss_function(outputs, y)
        loss.backward()
        optimizer.step()
        current_loss = loss.item()
        total_loss += current_loss

    val_losses = 0
    model.eval()
    with torch.no_grad():
        for i, data in enumerate(val_loader):
            X, y = data[0].to(device), data[1].to(device)
            outputs = model(X)
            val_losses += loss_function(outputs, y).item()
    print(f"Epoch {epoch + 1}/{epochs}, training loss: {total_loss / len(train_loader)}, validation loss: {val_losses / len(val_loader)}")
