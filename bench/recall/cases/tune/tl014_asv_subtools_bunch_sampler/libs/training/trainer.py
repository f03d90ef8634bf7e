# -*- coding:utf-8 -*-
import logging

import torch

import libs.support.utils as utils

logger = logging.getLogger(__name__)


class _BaseTrainer():
    def __init__(self, package, stop_early=False):
        default_elements = {"data": None, "model": None, "optimizer": None, "lr_scheduler": None}
        default_params = {"model_dir": "", "model_blueprint": "", "exist_model": "", "start_epoch": 0,
                          "epochs": 10, "use_gpu": True, "gpu_id": "", "max_change": 10.,
                          "compute_accuracy": True, "compute_valid_accuracy": True}

        elements, params = package
        self.elements = utils.assign_params_dict(default_elements, elements)
        self.params = utils.assign_params_dict(default_params, params, support_unknow=True)

        model = self.elements["model"]

        self.elements["model_forward"] = model
        self.training_point = (self.params["start_epoch"], 0, self.elements["data"].num_batch_train)
        self.stop_early = stop_early

    def select_device(self):
        return utils.select_model_device(self.elements["model"], self.params["use_gpu"],
                                         gpu_id=self.params["gpu_id"], benchmark=True)

    def train_one_batch(self, batch):
        model = self.elements["model"]
        model_forward = self.elements["model_forward"]
        optimizer = self.elements["optimizer"]

        if not model.training:
            model.train()

        inputs, targets = batch[0].to(self.device), batch[1].to(self.device)
        optimizer.zero_grad()

        loss = model.get_loss(model_forward(inputs), targets)
        loss.backward()
        loss.detach()

        if self.params["max_change"] > 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), self.params["max_change"])
            if utils.is_main_training():
                logger.debug("grad norm {:.4f}".format(float(grad_norm)))

        optimizer.step()

        accuracy = model.get_accuracy(targets) if self.params["compute_accuracy"] else None
        return loss.item(), accuracy


class SimpleTrainer(_BaseTrainer):
    """One input and one output.
    """
    def __init__(self, *args, **kwargs):
        super(SimpleTrainer, self).__init__(*args, **kwargs)

    def run(self):
        """Main function to start a training process.
        """
        try:
            self.init_training()

            if utils.is_main_training():
                self.reporter = utils.Reporter(self)

            start_epoch = self.params["start_epoch"]
            epochs = self.params["epochs"]
            data = self.elements["data"]
            model = self.elements["model"]
            model_forward = self.elements["model_forward"]
            lr_scheduler = self.elements["lr_scheduler"]

            for this_epoch in range(start_epoch, epochs):
                for this_iter, batch in enumerate(data.train_loader, 0):
                    self.training_point = (this_epoch, this_iter, data.num_batch_train)

                    loss, acc = self.train_one_batch(batch)

                    model.backward_step(*self.training_point)

                    # For multi-GPU training.
                    if utils.is_main_training():
                        if data.valid_loader and (this_iter % 100 == 0):
                            valid_loss, valid_acc = self.compute_validation(data.valid_loader)
                            self.reporter.update({"train_loss": loss, "valid_loss": valid_loss,
                                                  "train_acc": acc * 100, "valid_acc": valid_acc * 100,
                                                  "lr": lr_scheduler.get_last_lr()[0]})

                    if lr_scheduler is not None:
                        lr_scheduler.step()

                if utils.is_main_training():
                    self.save_model(this_epoch)

            if utils.is_main_training():
                self.reporter.finish()
        except BaseException as e:
            if utils.use_ddp():
                utils.cleanup_ddp()
            raise e

    def init_training(self):
        model = self.elements["model"]
        model_forward = self.elements["model_forward"]
        self.device = self.select_device()
        if utils.use_ddp():
            self.elements["model_forward"] = torch.nn.parallel.DistributedDataParallel(
                model_forward, device_ids=[self.device.index], output_device=self.device.index)

    def compute_validation(self, data_loader):
        model = self.elements["model"]
        model.eval()
        loss = 0.
        accuracy = 0.
        num_samples = 0
        with torch.no_grad():
            for this_data in data_loader:
                inputs, targets = this_data[0].to(self.device), this_data[1].to(self.device)
                num_utts = targets.size(0)
                loss += model.get_loss(model(inputs), targets).item() * num_utts
                accuracy += model.get_accuracy(targets) * num_utts
                num_samples += num_utts
        model.train()
        return loss / num_samples, accuracy / num_samples

    def save_model(self, epoch):
        torch.save(self.elements["model"].state_dict(), "{0}/{1}.params".format(self.params["model_dir"], epoch + 1))
