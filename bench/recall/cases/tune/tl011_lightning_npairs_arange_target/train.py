from argparse import Namespace

from pytorch_lightning import Trainer

from data import CodeSearchDataModule
from model import JointEncoder


def main():
    hparams = Namespace(model_name="bert-base-uncased", hidden_size=512, lr=1e-5, batch_size=32)
    model = JointEncoder(hparams)
    data = CodeSearchDataModule(batch_size=hparams.batch_size)
    trainer = Trainer(gpus=1, max_epochs=10)
    trainer.fit(model, datamodule=data)


if __name__ == "__main__":
    main()
