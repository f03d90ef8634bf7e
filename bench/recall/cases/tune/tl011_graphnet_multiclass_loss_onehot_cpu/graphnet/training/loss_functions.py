"""Collection of loss functions.

All loss functions inherit from `LossFunction` which ensures a common syntax,
handles per-event weights, etc.
"""
from abc import abstractmethod
from typing import Optional, Union

import numpy as np
import torch
from torch import Tensor
from torch import nn
from torch.nn.functional import one_hot, cross_entropy, binary_cross_entropy


class LossFunction(nn.Module):
    """Base class for loss functions in `graphnet`."""

    def forward(
        self,
        prediction: Tensor,
        target: Tensor,
        weights: Optional[Tensor] = None,
        return_elements: bool = False,
    ) -> Tensor:
        """Forward pass for all loss functions."""
        elements = self._forward(prediction, target)
        if weights is not None:
            elements = elements * weights
        assert elements.size(dim=0) == target.size(dim=0), "`_forward` should return elementwise loss terms."
        return elements if return_elements else torch.mean(elements)

    @abstractmethod
    def _forward(self, prediction: Tensor, target: Tensor) -> Tensor:
        """Syntax like `.forward`, for implentation in inheriting classes."""


class MSELoss(LossFunction):
    """Mean squared error loss."""

    def _forward(self, prediction: Tensor, target: Tensor) -> Tensor:
        assert prediction.dim() == 2
        if target.dim() != prediction.dim():
            target = target.squeeze(1)
        assert prediction.size() == target.size()
        return torch.mean((prediction - target) ** 2, dim=-1)


class BinaryCrossEntropyLoss(LossFunction):
    """Compute binary cross entropy loss."""

    def _forward(self, prediction: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(prediction.float(), target.float(), reduction="none")


class MultiClassificationCrossEntropyLoss(LossFunction):
    """Computes cross entropy for a matrix [num_class,N] of predictions (between 0 and 1).

    Targets [1,N] should be a particle id for noise (1,-1), muon (13,-13) and
    neutrino (12,-12,14,-14,16,-16) respectively; the loss is elementwise.
    """

    def _forward(self, prediction: Tensor, target: Tensor) -> Tensor:
        pid_transform = {1: 0, 12: 2, 13: 1, 14: 2, 16: 2}
        target_new = one_hot(
            torch.tensor([pid_transform[np.abs(int(value))] for value in target]),
            3,
        )
        return cross_entropy(prediction.float(), target_new.float(), reduction="none")
