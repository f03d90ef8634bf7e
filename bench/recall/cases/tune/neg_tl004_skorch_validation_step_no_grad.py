import numpy as np
import torch

from skorch.callbacks import EpochTimer, PrintLog
from skorch.dataset import get_len, uses_placeholder_y
from skorch.history import History
from skorch.utils import to_numpy, to_tensor


class NeuralNet(object):
    def __init__(self, module, criterion, optimizer=torch.optim.SGD, lr=0.01, max_epochs=10, batch_size=128,
                 iterator_train=torch.utils.data.DataLoader, iterator_valid=torch.utils.data.DataLoader,
                 device='cpu'):
        self.module = module
        self.criterion = criterion
        self.optimizer = optimizer
        self.lr = lr
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.iterator_train = iterator_train
        self.iterator_valid = iterator_valid
        self.device = device
        self.history = History()

    def initialize(self):
        self.module_ = self.module().to(self.device)
        self.criterion_ = self.criterion()
        self.optimizer_ = self.optimizer(self.module_.parameters(), lr=self.lr)
        return self

    def validation_step(self, Xi, yi, **fit_params):
        """Perform a forward step using batched data and return the resulting loss.

        The module is set to be in evaluation mode (e.g. dropout is not applied).
        """
        self.module_.eval()
        with torch.no_grad():
            y_pred = self.infer(Xi, **fit_params)
            loss = self.get_loss(y_pred, yi, X=Xi, training=False)
        return {'loss': loss, 'y_pred': y_pred}

    def train_step_single(self, Xi, yi, **fit_params):
        self.module_.train()
        self.optimizer_.zero_grad()
        y_pred = self.infer(Xi, **fit_params)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss.backward()
        return {'loss': loss, 'y_pred': y_pred}

    def train_step(self, Xi, yi, **fit_params):
        steps = []

        def step_fn():
            step = self.train_step_single(Xi, yi, **fit_params)
            steps.append(step)
            return step['loss']

        self.optimizer_.step(step_fn)
        return steps[0]

    def get_iterator(self, dataset, training=False):
        if training:
            return self.iterator_train(dataset, batch_size=self.batch_size, shuffle=True)
        return self.iterator_valid(dataset, batch_size=self.batch_size)

    def fit_loop(self, dataset_train, dataset_valid=None, epochs=None, **fit_params):
        epochs = epochs if epochs is not None else self.max_epochs
        y_valid_is_ph = uses_placeholder_y(dataset_valid) if dataset_valid is not None else False
        for _ in range(epochs):
            for Xi, yi in self.get_iterator(dataset_train, training=True):
                step = self.train_step(Xi, yi, **fit_params)
                self.history.record_batch('train_loss', step['loss'].item())
                self.history.record_batch('train_batch_size', get_len(Xi))
            if dataset_valid is None:
                continue
            for Xi, yi in self.get_iterator(dataset_valid, training=False):
                step = self.validation_step(Xi, yi, **fit_params)
                self.history.record_batch('valid_loss', step['loss'].item())
                self.history.record_batch('valid_batch_size', get_len(Xi))
        return self

    def infer(self, x, **fit_params):
        x = to_tensor(x, device=self.device)
        if isinstance(x, dict):
            return self.module_(**x, **fit_params)
        return self.module_(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = to_tensor(y_true, device=self.device)
        return self.criterion_(y_pred, y_true)

    def predict_proba(self, X):
        self.module_.eval()
        y_probas = []
        with torch.no_grad():
            for Xi, _ in self.get_iterator(X, training=False):
                y_probas.append(to_numpy(self.infer(Xi)))
        return np.concatenate(y_probas, 0)
