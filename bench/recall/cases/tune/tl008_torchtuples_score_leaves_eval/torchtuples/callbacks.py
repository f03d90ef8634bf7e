# Reduced: the handler that runs the callbacks and the monitor that scores the
# validation data at the end of every epoch.
from collections import OrderedDict, defaultdict


class Callback:
    def give_model(self, model):
        self.model = model

    def on_fit_start(self): pass
    def on_epoch_start(self): pass
    def on_batch_start(self): pass
    def before_step(self): pass
    def on_batch_end(self): pass
    def on_epoch_end(self): pass
    def on_fit_end(self): pass


class TrainingLogger(Callback):
    def __init__(self, verbose=1):
        self.verbose = verbose
        self.monitors = OrderedDict()
        self.epoch = 0

    def on_epoch_end(self):
        self.epoch += 1
        if self.verbose:
            scores = {name + key: value for name, mon in self.monitors.items() for key, value in mon.scores.items()}
            print(self.epoch, scores)


class MonitorTrainMetrics(Callback):
    def __init__(self):
        self.batch_losses = []
        self.scores = {}

    def on_batch_end(self):
        self.batch_losses.append(self.model.batch_loss.item())

    def on_epoch_end(self):
        self.scores = {'loss': sum(self.batch_losses) / max(len(self.batch_losses), 1)}
        self.batch_losses = []


class MonitorFitMetrics(Callback):
    def __init__(self, dataloader=None, per_epoch=1):
        self.dataloader = dataloader
        self.per_epoch = per_epoch
        self.epoch = 0
        self.scores = defaultdict(list)

    def on_epoch_end(self):
        self.epoch += 1
        if self.dataloader is None:
            return
        if self.epoch % self.per_epoch == 0:
            self.scores = self.model.score_in_batches_dataloader(self.dataloader)


class TrainingCallbackHandler:
    def __init__(self, optimizer, train_metrics, log, val_metrics=None, callbacks=None):
        self.callbacks = OrderedDict(optimizer=optimizer, train_metrics=train_metrics)
        if val_metrics:
            self.callbacks['val_metrics'] = val_metrics
        for i, c in enumerate(callbacks or []):
            self.callbacks[f'callback_{i}'] = c
        self.callbacks['log'] = log

    def give_model(self, model):
        for c in self.callbacks.values():
            if hasattr(c, 'give_model'):
                c.give_model(model)

    def _call(self, name):
        stop = False
        for c in self.callbacks.values():
            hook = getattr(c, name, None)
            if hook is not None:
                stop = stop or bool(hook())
        return stop

    def on_fit_start(self): return self._call('on_fit_start')
    def on_epoch_start(self): return self._call('on_epoch_start')
    def on_batch_start(self): return self._call('on_batch_start')
    def before_step(self): return self._call('before_step')
    def on_batch_end(self): return self._call('on_batch_end')
    def on_epoch_end(self): return self._call('on_epoch_end')
    def on_fit_end(self): return self._call('on_fit_end')
