import abc
import random
from random import choice

import torch
from torch import nn
from torch.autograd import Variable
from tqdm import tqdm

import utils


class BatchTrainable(nn.Module, metaclass=abc.ABCMeta):
    @abc.abstractmethod
    def train_a_batch(self, x, y):
        raise NotImplementedError


class Solver(BatchTrainable):
    """Abstract solver module of a scholar module"""
    def __init__(self):
        super().__init__()
        self.optimizer = None
        self.criterion = None

    @abc.abstractmethod
    def forward(self, x):
        raise NotImplementedError

    def solve(self, x):
        scores = self(x)
        _, predictions = torch.max(scores, 1)
        return predictions

    def train_a_batch(self, x, y):
        self.optimizer.zero_grad()
        loss = self.criterion(self.forward(x), y)
        loss.backward()
        self.optimizer.step()
        return {'loss': loss}

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer

    def set_criterion(self, criterion):
        self.criterion = criterion


class Scholar(nn.Module):
    """Scholar for Deep Generative Replay"""
    def __init__(self, label, generator, solver):
        super().__init__()
        self.label = label
        self.generator = generator
        self.solver = solver

    def train_with_replay(
            self, dataset, scholar=None, previous_datasets=None,
            importance_of_new_task=.5, batch_size=32,
            generator_iterations=2000,
            generator_training_callbacks=None,
            solver_iterations=1000,
            solver_training_callbacks=None):
        self._train_batch_trainable_with_replay(
            self.generator, dataset, scholar,
            importance_of_new_task=importance_of_new_task,
            batch_size=batch_size,
            iterations=generator_iterations,
            training_callbacks=generator_training_callbacks,
        )
        self._train_batch_trainable_with_replay(
            self.solver, dataset, scholar,
            importance_of_new_task=importance_of_new_task,
            batch_size=batch_size,
            iterations=solver_iterations,
            training_callbacks=solver_training_callbacks,
        )

    def sample(self, size):
        x = self.generator.sample(size)
        y = self.solver.solve(x)
        return x, y

    def _train_batch_trainable_with_replay(
            self, trainable, dataset, scholar=None, previous_datasets=None,
            importance_of_new_task=.5, batch_size=32, iterations=1000,
            training_callbacks=None):
        data_loader = iter(utils.get_data_loader(dataset, batch_size, cuda=self._is_on_cuda()))
        previous_datasets = previous_datasets or []
        previous_loaders = [
            iter(utils.get_data_loader(d, batch_size, cuda=self._is_on_cuda()))
            for d in previous_datasets
        ]
        progress = tqdm(range(1, iterations+1))

        for batch_index in progress:
            from_scholar = random.random() > importance_of_new_task and scholar is not None
            from_previous_datasets = random.random() > importance_of_new_task and previous_datasets

            x, y = (
                scholar.sample(batch_size) if from_scholar else
                next(choice(previous_loaders)) if from_previous_datasets else
                next(data_loader)
            )
            x = Variable(x).cuda() if self._is_on_cuda() else Variable(x)
            y = Variable(y).cuda() if self._is_on_cuda() else Variable(y)

            result = trainable.train_a_batch(x, y)

            for callback in (training_callbacks or []):
                callback(trainable, progress, batch_index, result)

    def _is_on_cuda(self):
        return next(self.parameters()).is_cuda
