"""Model for fitting torch models.
"""
from collections import OrderedDict, defaultdict

import torch

import torchtuples.callbacks as cb
from torchtuples.optim import AdamW, OptimWrap
from torchtuples.tupletree import tuplefy, make_dataloader


class Model(object):
    """Train torch models using dataloaders, tensors or np.arrays."""
    def __init__(self, net, loss=None, optimizer=None, device=None):
        self.net = net
        self.loss = loss
        self.optimizer = optimizer if optimizer is not None else AdamW
        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu') if device is None else device
        self.net.to(self.device)
        self._init_train_log()

    def _init_train_log(self):
        self.log = cb.TrainingLogger()
        self.train_metrics = cb.MonitorTrainMetrics()
        self.val_metrics = cb.MonitorFitMetrics()
        self.log.monitors = OrderedDict(train_=self.train_metrics, val_=self.val_metrics)
        self.callbacks = None

    @property
    def optimizer(self):
        return self._optimizer

    @optimizer.setter
    def optimizer(self, optimizer):
        self._optimizer = optimizer
        if callable(self._optimizer):
            self._optimizer = self._optimizer(params=self.net.parameters())
        if not isinstance(self._optimizer, OptimWrap):
            self._optimizer = OptimWrap(self._optimizer)

    @staticmethod
    def make_dataloader(data, batch_size, shuffle, num_workers=0, **kwargs):
        return make_dataloader(data, batch_size, shuffle, num_workers, **kwargs)

    def _to_device(self, data):
        if data is None:
            return tuplefy(data)
        return tuplefy(data).to_device(self.device)

    def compute_metrics(self, input, target, metrics):
        input = self._to_device(input)
        target = self._to_device(target)
        out = self.net(*input)
        out = tuplefy(out)
        return {name: metric(*out, *target) for name, metric in metrics.items()}

    def fit_dataloader(self, dataloader, epochs=1, callbacks=None, verbose=True, val_dataloader=None):
        self.metrics = {'loss': self.loss}
        self.log.verbose = verbose
        self.val_metrics.dataloader = val_dataloader
        if callbacks is None:
            callbacks = []
        self.callbacks = cb.TrainingCallbackHandler(self.optimizer, self.train_metrics, self.log,
                                                    self.val_metrics, callbacks)
        self.callbacks.give_model(self)

        stop = self.callbacks.on_fit_start()
        for _ in range(epochs):
            if stop: break
            stop = self.callbacks.on_epoch_start()
            if stop: break
            for input, target in dataloader:
                stop = self.callbacks.on_batch_start()
                if stop: break
                self.optimizer.zero_grad()
                self.batch_metrics = self.compute_metrics(input, target, self.metrics)
                self.batch_loss = self.batch_metrics['loss']
                self.batch_loss.backward()
                stop = self.callbacks.before_step()
                if stop: break
                self.optimizer.step()
                stop = self.callbacks.on_batch_end()
                if stop: break
            else:
                stop = self.callbacks.on_epoch_end()
        self.callbacks.on_fit_end()
        return self.log

    def fit(self, input, target, batch_size=256, epochs=1, callbacks=None, verbose=True,
            num_workers=0, shuffle=True, val_data=None, val_batch_size=8224, **kwargs):
        dataloader = self.make_dataloader((input, target), batch_size, shuffle, num_workers, **kwargs)
        val_dataloader = val_data
        if type(val_data) in (list, tuple):
            val_dataloader = self.make_dataloader(val_data, val_batch_size, shuffle=False,
                                                  num_workers=num_workers, **kwargs)
        return self.fit_dataloader(dataloader, epochs, callbacks, verbose, val_dataloader)

    def score_in_batches_dataloader(self, dataloader, eval_=True, mean=True):
        '''Score a dataset in batches.

        Parameters:
            dataloader: Dataloader:
            eval_: If net should be in eval mode.
            mean: If return mean or list with scores.
        '''
        if eval_:
            self.net.eval()
        batch_scores = []
        with torch.no_grad():
            for input, target in dataloader:
                score = self.compute_metrics(input, target, self.metrics)
                batch_scores.append(score)
        scores = defaultdict(list)
        for bs in batch_scores:
            for name, score in bs.items():
                scores[name].append(score)
        scores = {name: torch.tensor(score) for name, score in scores.items()}
        if mean:
            scores = {name: score.mean() for name, score in scores.items()}
        return {name: score.item() for name, score in scores.items()}
