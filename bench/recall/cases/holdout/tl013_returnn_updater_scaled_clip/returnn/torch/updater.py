"""
This module covers the optimizer (SGD, Adam, etc) logic,
and model param update logic in general.
"""

from __future__ import annotations

from typing import Optional

import torch

from returnn.log import log


class Updater(object):
    """
    Wraps a torch.optim.Optimizer, and extends it by some further functionality.
    """

    def __init__(self, *, config, network: torch.nn.Module, device: torch.device, initial_learning_rate=1.0):
        self.config = config
        self.learning_rate = initial_learning_rate
        self.network = network
        self._device = device
        self.optimizer = None  # type: Optional[torch.optim.Optimizer]

        self._grad_clip = self.config.float("gradient_clip", 0.0)
        self._grad_clip_global_norm = self.config.float("gradient_clip_global_norm", 0.0)
        self._grad_noise = self.config.float("gradient_noise", 0.0)

    def create_optimizer(self):
        opts = self.config.typed_value("optimizer", {"class": "adam"})
        lr = self.learning_rate
        if opts.get("class", "adam").lower() == "adamw":
            self.optimizer = torch.optim.AdamW(self.network.parameters(), lr=lr, eps=opts.get("epsilon", 1e-8))
        else:
            self.optimizer = torch.optim.Adam(self.network.parameters(), lr=lr, eps=opts.get("epsilon", 1e-8))
        print("Optimizer: %s" % self.optimizer, file=log.v1)

    def set_learning_rate(self, value):
        self.learning_rate = value
        for param_group in self.optimizer.param_groups:
            param_group["lr"] = value

    def step(self, *, grad_scaler: Optional[torch.cuda.amp.GradScaler] = None):
        """
        Perform one step, i.e. update the parameters using the optimizer given the current calculated gradients.
        """
        if self._grad_noise:
            gradient_noise_(self.network.parameters(), self._grad_noise)
        if self._grad_clip:
            torch.nn.utils.clip_grad_value_(self.network.parameters(), self._grad_clip)
        if self._grad_clip_global_norm:
            torch.nn.utils.clip_grad_norm_(self.network.parameters(), self._grad_clip_global_norm)

        if grad_scaler is not None:
            grad_scaler.step(self.optimizer)
            grad_scaler.update()
        else:
            self.optimizer.step()

    def zero_grad(self):
        self.optimizer.zero_grad(set_to_none=True)


def gradient_noise_(params, std: float):
    """
    Add gradient noise to parameters, using a truncated normal distribution.
    """
    with torch.no_grad():
        for param in params:
            if param.grad is None:
                continue
            noise = torch.empty_like(param.grad)
            torch.nn.init.trunc_normal_(noise, std=std)
            param.grad += noise
