from collections import defaultdict

import torch
from tqdm import tqdm

from parallel_wavegan.losses import MultiResolutionSTFTLoss
from parallel_wavegan.models import ParallelWaveGANDiscriminator, ParallelWaveGANGenerator
from parallel_wavegan.optimizers import RAdam


class Trainer(object):
    """Customized trainer module for Parallel WaveGAN training."""

    def __init__(self, steps, epochs, data_loader, model, criterion, optimizer, scheduler,
                 config, device=torch.device("cpu")):
        self.steps = steps
        self.epochs = epochs
        self.data_loader = data_loader
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.config = config
        self.device = device
        self.finish_train = False
        self.total_train_loss = defaultdict(float)
        self.total_eval_loss = defaultdict(float)

    def run(self):
        self.tqdm = tqdm(initial=self.steps, total=self.config["train_max_steps"], desc="[train]")
        while True:
            self._train_epoch()
            if self.finish_train:
                break
        self.tqdm.close()

    def _parse_batch(self, batch):
        x, y = batch
        x = tuple([x_.to(self.device) for x_ in x])
        y = y.to(self.device)
        return x, y

    def _train_step(self, batch):
        x, y = self._parse_batch(batch)
        y_ = self.model["generator"](*x)

        sc_loss, mag_loss = self.criterion["stft"](y_.squeeze(1), y.squeeze(1))
        gen_loss = sc_loss + mag_loss
        if self.steps > self.config["discriminator_train_start_steps"]:
            p_ = self.model["discriminator"](y_)
            adv_loss = self.criterion["mse"](p_, p_.new_ones(p_.size()))
            gen_loss += self.config["lambda_adv"] * adv_loss
            self.total_train_loss["train/adversarial_loss"] += adv_loss.item()
        self.total_train_loss["train/generator_loss"] += gen_loss.item()

        self.optimizer["generator"].zero_grad()
        gen_loss.backward()
        if self.config["generator_grad_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(self.model["generator"].parameters(),
                                           self.config["generator_grad_norm"])
        self.optimizer["generator"].step()
        self.scheduler["generator"].step()

        if self.steps > self.config["discriminator_train_start_steps"]:
            y_ = self.model["generator"](*x).detach()
            p = self.model["discriminator"](y)
            p_ = self.model["discriminator"](y_)
            real_loss = self.criterion["mse"](p, p.new_ones(p.size()))
            fake_loss = self.criterion["mse"](p_, p_.new_zeros(p_.size()))
            dis_loss = real_loss + fake_loss
            self.total_train_loss["train/discriminator_loss"] += dis_loss.item()

            self.optimizer["discriminator"].zero_grad()
            dis_loss.backward()
            self.optimizer["discriminator"].step()
            self.scheduler["discriminator"].step()

        self.steps += 1
        self.tqdm.update(1)
        self._check_train_finish()

    def _train_epoch(self):
        for train_steps_per_epoch, batch in enumerate(self.data_loader["train"], 1):
            self._train_step(batch)
            self._check_eval_interval()
            if self.finish_train:
                return
        self.epochs += 1

    def _eval_step(self, batch):
        x, y = self._parse_batch(batch)
        y_ = self.model["generator"](*x)
        p_ = self.model["discriminator"](y_)

        adv_loss = self.criterion["mse"](p_, p_.new_ones(p_.size()))
        sc_loss, mag_loss = self.criterion["stft"](y_.squeeze(1), y.squeeze(1))
        aux_loss = sc_loss + mag_loss
        gen_loss = aux_loss + self.config["lambda_adv"] * adv_loss

        p = self.model["discriminator"](y)
        p_ = self.model["discriminator"](y_)
        real_loss = self.criterion["mse"](p, p.new_ones(p.size()))
        fake_loss = self.criterion["mse"](p_, p_.new_zeros(p_.size()))
        dis_loss = real_loss + fake_loss

        self.total_eval_loss["eval/generator_loss"] += gen_loss.item()
        self.total_eval_loss["eval/discriminator_loss"] += dis_loss.item()

    def _eval_epoch(self):
        for key in self.model.keys():
            self.model[key].eval()

        for eval_steps_per_epoch, batch in enumerate(tqdm(self.data_loader["dev"], desc="[eval]"), 1):
            self._eval_step(batch)

        for key in self.total_eval_loss.keys():
            self.total_eval_loss[key] /= eval_steps_per_epoch
        self.total_eval_loss = defaultdict(float)

        for key in self.model.keys():
            self.model[key].train()

    def _check_eval_interval(self):
        if self.steps % self.config["eval_interval_steps"] == 0:
            self._eval_epoch()

    def _check_train_finish(self):
        if self.steps >= self.config["train_max_steps"]:
            self.finish_train = True


def main(config, data_loader):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = {
        "generator": ParallelWaveGANGenerator(**config["generator_params"]).to(device),
        "discriminator": ParallelWaveGANDiscriminator(**config["discriminator_params"]).to(device),
    }
    criterion = {
        "stft": MultiResolutionSTFTLoss(**config["stft_loss_params"]).to(device),
        "mse": torch.nn.MSELoss().to(device),
    }
    optimizer = {
        "generator": RAdam(model["generator"].parameters(), **config["generator_optimizer_params"]),
        "discriminator": RAdam(model["discriminator"].parameters(), **config["discriminator_optimizer_params"]),
    }
    scheduler = {
        "generator": torch.optim.lr_scheduler.StepLR(optimizer["generator"], **config["generator_scheduler_params"]),
        "discriminator": torch.optim.lr_scheduler.StepLR(optimizer["discriminator"], **config["discriminator_scheduler_params"]),
    }
    trainer = Trainer(steps=0, epochs=0, data_loader=data_loader, model=model, criterion=criterion,
                      optimizer=optimizer, scheduler=scheduler, config=config, device=device)
    trainer.run()
