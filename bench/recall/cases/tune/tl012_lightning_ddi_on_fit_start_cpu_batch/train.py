import pytorch_lightning as pl

from vits.dataset import TTSDataModule
from vits.lightning import GlowTTSModel


def main():
    datamodule = TTSDataModule("data/dataset.jsonl", batch_size=32, num_workers=4)
    model = GlowTTSModel(n_vocab=256, out_channels=80, n_speakers=4)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=1000)
    trainer.fit(model, datamodule=datamodule)


if __name__ == "__main__":
    main()
