import os

import torch
from torch import nn, optim
from torch.nn.utils import clip_grad_norm_
from torch.utils.data import DataLoader

from catalyst import dl
from catalyst.callbacks.optimizer import OptimizerCallback
from catalyst.contrib.datasets import MNIST
from catalyst.data import ToTensor
from catalyst.engines.amp import AMPEngine

model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(), nn.Linear(256, 10))
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=0.02)

loaders = {
    "train": DataLoader(MNIST(os.getcwd(), train=True, download=True, transform=ToTensor()), batch_size=32,
                        num_workers=4),
    "valid": DataLoader(MNIST(os.getcwd(), train=False, transform=ToTensor()), batch_size=32, num_workers=4),
}

runner = dl.SupervisedRunner(input_key="features", output_key="logits", target_key="targets", loss_key="loss")
runner.train(
    engine=AMPEngine("cuda"),
    model=model,
    criterion=criterion,
    optimizer=optimizer,
    loaders=loaders,
    num_epochs=1,
    callbacks=[
        dl.CriterionCallback(input_key="logits", target_key="targets", metric_key="loss"),
        OptimizerCallback(metric_key="loss", grad_clip_fn=clip_grad_norm_, grad_clip_params={"max_norm": 1.0}),
    ],
    logdir="./logs",
    valid_loader="valid",
    valid_metric="loss",
    minimize_valid_metric=True,
    verbose=True,
)
