from mmaction.apis.test import single_gpu_test


class Hook:
    def before_run(self, runner):
        pass

    def after_run(self, runner):
        pass

    def before_train_epoch(self, runner):
        pass

    def after_train_epoch(self, runner):
        pass

    def before_train_iter(self, runner):
        pass

    def after_train_iter(self, runner):
        pass


class EvalHook(Hook):
    """Non-Distributed evaluation hook: evaluates by epoch or, with by_epoch=False, every
    `interval` iterations."""

    def __init__(self, dataloader, interval=1, by_epoch=True, **eval_kwargs):
        self.dataloader = dataloader
        self.interval = interval
        self.by_epoch = by_epoch
        self.eval_kwargs = eval_kwargs

    def after_train_iter(self, runner):
        if not self.by_epoch and (runner.iter + 1) % self.interval == 0:
            self._do_evaluate(runner)

    def after_train_epoch(self, runner):
        if self.by_epoch and (runner.epoch + 1) % self.interval == 0:
            self._do_evaluate(runner)

    def _do_evaluate(self, runner):
        results = single_gpu_test(runner.model, self.dataloader)
        eval_res = self.dataloader.dataset.evaluate(results, logger=runner.logger, **self.eval_kwargs)
        for name, val in eval_res.items():
            runner.log_buffer.output[name] = val
        runner.log_buffer.ready = True
