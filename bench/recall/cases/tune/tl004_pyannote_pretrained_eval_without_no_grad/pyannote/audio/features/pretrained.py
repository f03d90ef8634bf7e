from pathlib import Path
from typing import Optional, Text, Union

import numpy as np
import torch
from pyannote.core import SlidingWindow, SlidingWindowFeature

from pyannote.audio.train.model import RESOLUTION_FRAME, Model
from pyannote.audio.features.base import FeatureExtraction
from pyannote.audio.features.utils import get_audio_duration


class Pretrained(FeatureExtraction):
    """Pretrained model wrapper: applies a trained model on sliding windows."""

    def __init__(self, validate_dir: Path = None, epoch: int = None, augmentation=None,
                 duration: float = None, step: float = 0.25, batch_size: int = 32,
                 device: Optional[Union[Text, torch.device]] = None, return_intermediate=None,
                 progress_hook=None):
        model, specifications, preprocessors = Model.from_validate_dir(validate_dir, epoch=epoch)
        super().__init__(augmentation=augmentation, sample_rate=specifications["sample_rate"])
        self.preprocessors = preprocessors
        self.feature_extraction_ = preprocessors["audio"]
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)

        # send model to device
        self.model_ = model.eval().to(self.device)

        self.duration = duration if duration is not None else self.model_.duration
        self.step = step
        self.batch_size = batch_size
        self.chunks_ = SlidingWindow(duration=self.duration, step=self.step * self.duration)
        self.return_intermediate = return_intermediate
        self.progress_hook = progress_hook

    def _apply(self, X: np.ndarray) -> np.ndarray:
        batches = []
        for i in range(0, len(X), self.batch_size):
            batch = torch.tensor(X[i:i + self.batch_size], dtype=torch.float32, device=self.device)
            fX = self.model_(batch, return_intermediate=self.return_intermediate)
            batches.append(fX.detach().to("cpu").numpy())
            if self.progress_hook is not None:
                self.progress_hook(i + len(batch), len(X))
        return np.vstack(batches)

    def get_features(self, y, sample_rate) -> np.ndarray:
        features = SlidingWindowFeature(self.feature_extraction_.get_features(y, sample_rate),
                                        self.feature_extraction_.sliding_window)
        chunks = list(self.chunks_(features.extent, align_last=True))
        X = np.stack([features.crop(chunk, mode="center", fixed=self.duration) for chunk in chunks])
        fX = self._apply(X)
        if self.model_.resolution == RESOLUTION_FRAME:
            return fX.mean(axis=1)
        return fX
