import torch
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms

from vulcanai.models.dnn import DenseNet

transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_loader = torch.utils.data.DataLoader(
    datasets.MNIST("data", train=True, download=True, transform=transform), batch_size=100, shuffle=True)
val_loader = torch.utils.data.DataLoader(
    datasets.MNIST("data", train=False, transform=transform), batch_size=100, shuffle=False)

model = DenseNet(name="dnn_class", in_dim=784, config={"dense_units": [100, 50], "dropout": 0.3},
                 num_classes=10, optim_spec={"name": "Adam", "lr": 0.001})
model._init_trainer()
model.lr_scheduler = StepLR(model.optim, step_size=5, gamma=0.5)
model.fit(train_loader, val_loader, epochs=20, valid_interv=2)
