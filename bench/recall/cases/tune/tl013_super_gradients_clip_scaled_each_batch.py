import torch
from torch import nn
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm

from super_gradients.training.utils.callbacks import CallbackHandler, Phase, PhaseContext
from super_gradients.training.utils.ema import ModelEMA
from super_gradients.training.utils.utils import AverageMeter


class Trainer:
    def __init__(self, experiment_name: str, device: str = "cuda"):
        self.experiment_name = experiment_name
        self.device = device
        self.net = None
        self.optimizer = None
        self.scaler = None
        self.ema = False
        self.ema_model = None
        self.batch_accumulate = 1
        self.training_params = None
        self.phase_callback_handler = CallbackHandler([])

    def _train_epoch(self, epoch: int, silent_mode: bool = False):
        self.net.train()
        loss_avg_meter = AverageMeter()
        context = PhaseContext(epoch=epoch, optimizer=self.optimizer, criterion=self.criterion)
        progress_bar_train_loader = tqdm(self.train_loader, bar_format="{l_bar}{bar:10}{r_bar}", dynamic_ncols=True,
                                         disable=silent_mode)
        for batch_idx, batch_items in enumerate(progress_bar_train_loader):
            inputs, targets = batch_items[0].to(self.device, non_blocking=True), batch_items[1].to(self.device, non_blocking=True)
            with autocast(enabled=self.training_params.mixed_precision):
                outputs = self.net(inputs)
                loss, loss_log_items = self._get_losses(outputs, targets)
            context.update_context(batch_idx=batch_idx, inputs=inputs, preds=outputs, target=targets,
                                   loss_log_items=loss_log_items)
            self.phase_callback_handler(Phase.TRAIN_BATCH_END, context)
            self._backward_step(loss, epoch, batch_idx, context)
            loss_avg_meter.update(loss_log_items.detach().cpu(), inputs.size(0))
        return loss_avg_meter.average

    def _get_losses(self, outputs, targets):
        loss = self.criterion(outputs, targets)
        return loss, loss.detach().unsqueeze(0)

    def _backward_step(self, loss: torch.Tensor, epoch: int, batch_idx: int, context: PhaseContext):
        """
        Run backprop on the loss and perform a step
        """
        # SCALER IS ENABLED ONLY IF self.training_params.mixed_precision=True
        self.scaler.scale(loss).backward()

        # APPLY GRADIENT CLIPPING IF REQUIRED
        if self.training_params.clip_grad_norm:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.training_params.clip_grad_norm)

        # ACCUMULATE GRADIENT FOR X BATCHES BEFORE OPTIMIZING
        integrated_batches_num = batch_idx + len(self.train_loader) * epoch + 1

        if integrated_batches_num % self.batch_accumulate == 0:
            # SCALER IS ENABLED ONLY IF self.training_params.mixed_precision=True
            self.scaler.step(self.optimizer)
            self.scaler.update()

            self.optimizer.zero_grad()
            if self.ema:
                self.ema_model.update(self.net, integrated_batches_num / (len(self.train_loader) * self.max_epochs))

            # RUN PHASE CALLBACKS
            self.phase_callback_handler(Phase.TRAIN_BATCH_STEP, context)

    def train(self, model: nn.Module, training_params, train_loader, valid_loader=None):
        self.net = model.to(self.device)
        self.training_params = training_params
        self.train_loader = train_loader
        self.valid_loader = valid_loader
        self.max_epochs = training_params.max_epochs
        self.batch_accumulate = training_params.batch_accumulate
        self.criterion = training_params.loss
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=training_params.initial_lr, momentum=0.9)
        self.scaler = GradScaler(enabled=training_params.mixed_precision)
        self.ema = training_params.ema
        if self.ema:
            self.ema_model = ModelEMA(self.net)
        for epoch in range(self.max_epochs):
            train_metrics = self._train_epoch(epoch)
            print(epoch, train_metrics)
