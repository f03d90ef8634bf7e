"""
Functions used by the GUI trainer and the Colab notebook.
"""
from time import time
from typing import Optional

import matplotlib.pyplot as plt
import numpy as np
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from nam.data import Split, init_dataset, wav_to_np
from nam.train.lightning_module import LightningModule

_DEFAULT_LR = 0.004


def _get_configs(input_path, output_path, delay, epochs, architecture, lr, lr_decay):
    data_config = {
        "train": {"ny": 8192, "stop": -9 * 48_000},
        "validation": {"ny": None, "start": -9 * 48_000},
        "common": {"x_path": input_path, "y_path": output_path, "delay": delay},
    }
    model_config = {
        "net": {"name": "WaveNet", "config": {"architecture": architecture}},
        "loss": {"val_loss": "esr"},
        "optimizer": {"lr": lr},
        "lr_scheduler": {"class": "ExponentialLR", "kwargs": {"gamma": 1.0 - lr_decay}},
    }
    learning_config = {
        "train_dataloader": {"batch_size": 16, "shuffle": True, "pin_memory": True, "drop_last": True, "num_workers": 0},
        "val_dataloader": {},
        "trainer": {"max_epochs": epochs, "accelerator": "gpu" if torch.cuda.is_available() else "cpu", "devices": 1},
    }
    return data_config, model_config, learning_config


def _plot(model, ds, window_start: Optional[int] = None, window_end: Optional[int] = None,
          filepath: Optional[str] = None, silent: bool = False):
    with torch.no_grad():
        tx = len(ds.x) / 48_000
        print(f"Run (t={tx:.2f} sec)")
        t0 = time()
        output = model(ds.x).flatten().cpu().numpy()
        t1 = time()
        print(f"Took {t1 - t0:.2f} sec ({tx / (t1 - t0):.2f}x)")

    esr = np.mean((output - ds.y.numpy()) ** 2) / np.mean(ds.y.numpy() ** 2)
    plt.figure(figsize=(16, 5))
    plt.plot(output[window_start:window_end], label="Prediction")
    plt.plot(ds.y[window_start:window_end], linestyle="--", label="Target")
    plt.title(f"ESR={esr:.4f}")
    plt.legend()
    if filepath is not None:
        plt.savefig(filepath + ".png")
    if not silent:
        plt.show()


def train(input_path: str, output_path: str, train_path: str, epochs=100, delay=None, architecture="standard",
          lr=_DEFAULT_LR, lr_decay=0.007, seed: Optional[int] = 0, save_plot: bool = False, silent: bool = False):
    if seed is not None:
        torch.manual_seed(seed)

    data_config, model_config, learning_config = _get_configs(
        input_path, output_path, delay, epochs, architecture, lr, lr_decay)

    print("Starting training. It's about time to go make a cup of coffee!")
    model = LightningModule.init_from_config(model_config)
    model.net.sample_rate = 48_000
    dataset_train = init_dataset(data_config, Split.TRAIN)
    dataset_validation = init_dataset(data_config, Split.VALIDATION)
    train_dataloader = DataLoader(dataset_train, **learning_config["train_dataloader"])
    val_dataloader = DataLoader(dataset_validation, **learning_config["val_dataloader"])

    trainer = pl.Trainer(
        callbacks=[pl.callbacks.model_checkpoint.ModelCheckpoint(
            filename="checkpoint_best_{epoch:04d}_{step}_{ESR:.4g}_{MSE:.3e}", save_top_k=3, monitor="val_loss")],
        default_root_dir=train_path,
        **learning_config["trainer"],
    )
    trainer.fit(model, train_dataloader, val_dataloader)

    # Go to best checkpoint
    best_checkpoint = trainer.checkpoint_callback.best_model_path
    if best_checkpoint != "":
        model = LightningModule.load_from_checkpoint(
            trainer.checkpoint_callback.best_model_path,
            **LightningModule.parse_config(model_config),
        )
    model.eval()

    _plot(
        model,
        dataset_validation,
        filepath=train_path + "/" + "comparison" if save_plot else None,
        window_start=100_000,
        window_end=110_000,
        silent=silent,
    )
    return model
