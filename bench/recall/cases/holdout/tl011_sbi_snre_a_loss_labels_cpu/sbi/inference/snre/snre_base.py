from abc import ABC, abstractmethod
from copy import deepcopy
from typing import Any, Callable, Optional

import torch
from torch import Tensor, eye, nn, ones, optim
from torch.nn.utils.clip_grad import clip_grad_norm_
from torch.utils import data
from torch.utils.data.sampler import SubsetRandomSampler

from sbi.utils import repeat_rows, classifier_nn


class RatioEstimator(ABC):
    def __init__(self, prior=None, classifier: str = "resnet", device: str = "cpu", **unused: Any):
        self._prior = prior
        self._device = device
        self._build_neural_net = classifier_nn(model=classifier) if isinstance(classifier, str) else classifier
        self._neural_net: Optional[nn.Module] = None
        self._theta_roundwise = []
        self._x_roundwise = []
        self._val_log_prob = float("-Inf")
        self._best_val_log_prob = float("-Inf")
        self._epochs_since_last_improvement = 0

    def append_simulations(self, theta: Tensor, x: Tensor) -> "RatioEstimator":
        self._theta_roundwise.append(theta)
        self._x_roundwise.append(x)
        return self

    def train(self, num_atoms: int = 10, training_batch_size: int = 50, learning_rate: float = 5e-4,
              validation_fraction: float = 0.1, stop_after_epochs: int = 20, max_num_epochs: int = 2**31 - 1,
              clip_max_norm: Optional[float] = 5.0) -> nn.Module:
        theta = torch.cat(self._theta_roundwise)
        x = torch.cat(self._x_roundwise)
        dataset = data.TensorDataset(theta, x)

        num_examples = len(theta)
        num_training_examples = int((1 - validation_fraction) * num_examples)
        num_validation_examples = num_examples - num_training_examples
        permuted_indices = torch.randperm(num_examples)
        train_indices, val_indices = permuted_indices[:num_training_examples], permuted_indices[num_training_examples:]

        clipped_batch_size = min(training_batch_size, num_validation_examples)
        train_loader = data.DataLoader(dataset, batch_size=clipped_batch_size, drop_last=True,
                                       sampler=SubsetRandomSampler(train_indices))
        val_loader = data.DataLoader(dataset, batch_size=clipped_batch_size, shuffle=False, drop_last=True,
                                     sampler=SubsetRandomSampler(val_indices))

        if self._neural_net is None:
            self._neural_net = self._build_neural_net(theta[:100], x[:100])
        self._neural_net.to(self._device)
        optimizer = optim.Adam(list(self._neural_net.parameters()), lr=learning_rate)

        epoch = 0
        while epoch <= max_num_epochs and not self._converged(epoch, stop_after_epochs):
            self._neural_net.train()
            for batch in train_loader:
                optimizer.zero_grad()
                theta_batch, x_batch = (batch[0].to(self._device), batch[1].to(self._device))
                loss = torch.mean(self._loss(theta_batch, x_batch, num_atoms))
                loss.backward()
                if clip_max_norm is not None:
                    clip_grad_norm_(self._neural_net.parameters(), max_norm=clip_max_norm)
                optimizer.step()

            epoch += 1

            self._neural_net.eval()
            log_prob_sum = 0
            with torch.no_grad():
                for batch in val_loader:
                    theta_batch, x_batch = (batch[0].to(self._device), batch[1].to(self._device))
                    log_prob = self._loss(theta_batch, x_batch, num_atoms)
                    log_prob_sum -= log_prob.sum().item()
            self._val_log_prob = log_prob_sum / num_validation_examples

        return deepcopy(self._neural_net)

    def _classifier_logits(self, theta: Tensor, x: Tensor, num_atoms: int) -> Tensor:
        """Return logits obtained through classifier forward pass.

        The logits are obtained from atomic sets of (theta,x) pairs.
        """
        batch_size = theta.shape[0]
        repeated_x = repeat_rows(x, num_atoms)

        # Choose `1` or `num_atoms - 1` thetas from the rest of the batch for each x.
        probs = ones(batch_size, batch_size) * (1 - eye(batch_size)) / (batch_size - 1)
        choices = torch.multinomial(probs, num_samples=num_atoms - 1, replacement=False)
        contrasting_theta = theta[choices]

        atomic_theta = torch.cat((theta[:, None, :], contrasting_theta), dim=1).reshape(batch_size * num_atoms, -1)
        theta_and_x = torch.cat((atomic_theta, repeated_x), dim=1)
        return self._neural_net(theta_and_x)

    @abstractmethod
    def _loss(self, theta: Tensor, x: Tensor, num_atoms: int) -> Tensor:
        raise NotImplementedError

    def _converged(self, epoch: int, stop_after_epochs: int) -> bool:
        converged = False
        if epoch == 0 or self._val_log_prob > self._best_val_log_prob:
            self._epochs_since_last_improvement = 0
            self._best_val_log_prob = self._val_log_prob
        else:
            self._epochs_since_last_improvement += 1
        if self._epochs_since_last_improvement > stop_after_epochs - 1:
            converged = True
        return converged
