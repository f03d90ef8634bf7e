from .log_buffer import LogBuffer


class BaseRunner:
    def __init__(self, model, optimizer=None, work_dir=None, logger=None, max_epochs=None):
        self.model = model
        self.optimizer = optimizer
        self.work_dir = work_dir
        self.logger = logger
        self._hooks = []
        self._epoch = 0
        self._iter = 0
        self._inner_iter = 0
        self._max_epochs = max_epochs
        self.log_buffer = LogBuffer()

    @property
    def epoch(self):
        return self._epoch

    @property
    def iter(self):
        return self._iter

    def register_hook(self, hook):
        self._hooks.append(hook)

    def call_hook(self, fn_name):
        for hook in self._hooks:
            getattr(hook, fn_name)(self)
