"""
Hide the mess in Colab to make things look pretty for users.
"""
from pathlib import Path

from nam.train.core import train

_INPUT_BASENAME = "v1_1_1.wav"
_OUTPUT_BASENAME = "output.wav"
_TRAIN_PATH = "."


def run(epochs=100, delay=None, architecture="standard", lr=0.004, lr_decay=0.007, seed=0):
    model = train(
        _INPUT_BASENAME,
        _OUTPUT_BASENAME,
        _TRAIN_PATH,
        epochs=epochs,
        delay=delay,
        architecture=architecture,
        lr=lr,
        lr_decay=lr_decay,
        seed=seed,
        save_plot=True,
        silent=False,
    )
    model.net.export(Path(_TRAIN_PATH) / "exported_model")
    print("Model training complete!")
