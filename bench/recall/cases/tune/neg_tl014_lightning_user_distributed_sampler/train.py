# Reconstructed launcher: Lightning's DDP fit loop calls set_epoch on the training
# loader's sampler at the start of every epoch.
import pytorch_lightning as pl
from torchvision import transforms
from torchvision.datasets import MNIST

from model import LitClassifier


def main():
    transform = transforms.ToTensor()
    train_dataset = MNIST('./data', train=True, download=True, transform=transform)
    val_dataset = MNIST('./data', train=False, download=True, transform=transform)
    model = LitClassifier(train_dataset, val_dataset)
    trainer = pl.Trainer(gpus=2, accelerator='ddp', max_epochs=20, replace_sampler_ddp=False)
    trainer.fit(model)


if __name__ == '__main__':
    main()
