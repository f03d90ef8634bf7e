"""Torch Agent implements much of the boilerplate necessary for creating a neural dialogue agent (reduced)."""
import torch

from parlai.core.agents import Agent
from parlai.utils.fp16 import FP16Optimizer


class TorchAgent(Agent):
    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.opt = opt
        self.use_cuda = not opt['no_cuda'] and torch.cuda.is_available()
        self.fp16 = self.use_cuda and opt.get('fp16', False)
        self._number_grad_accum = 0
        self.metrics = {'loss': 0.0, 'num_tokens': 0}

    def init_optim(self, params, lr):
        self.optimizer = torch.optim.Adam(params, lr=lr)
        if self.fp16:
            self.optimizer = FP16Optimizer(self.optimizer, dynamic_loss_scale=True)

    def backward(self, loss):
        """
        Perform a backward pass.

        It is recommended you use this instead of loss.backward(), for integration with
        distributed training and FP16 training.
        """
        update_freq = self.opt.get('update_freq', 1)

        if update_freq > 1:
            # gradient accumulation, but still need to average across the minibatches
            self._number_grad_accum = (self._number_grad_accum + 1) % update_freq

        if self.fp16:
            self.optimizer.backward(loss, update_master_grads=False)
        else:
            loss.backward()

    def update_params(self):
        """
        Perform step of optimization.

        Handles clipping gradients and adjusting LR schedule if needed. Gradient
        accumulation is also performed if agent is called with --update-freq.
        """
        update_freq = self.opt.get('update_freq', 1)
        if update_freq > 1:
            # we're doing gradient accumulation, so we don't only want to step
            # every N updates instead
            if self._number_grad_accum != 0:
                return

        if self.fp16:
            self.optimizer.update_master_grads()

        if self.opt.get('gradient_clip', -1) > 0:
            if self.fp16:
                self.optimizer.clip_master_grads(self.opt['gradient_clip'])
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.opt['gradient_clip'])

        self.optimizer.step()

    def zero_grad(self):
        """Zero out optimizer."""
        if self._number_grad_accum != 0:
            # if we're accumulating gradients, don't actually zero things out yet.
            return
        self.optimizer.zero_grad()
