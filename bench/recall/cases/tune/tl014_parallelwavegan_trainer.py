import logging

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm


class Trainer(object):
    """Customized trainer module for Parallel WaveGAN training."""

    def __init__(self, steps, epochs, data_loader, sampler, model, criterion, optimizer,
                 scheduler, config, device=torch.device("cpu")):
        self.steps = steps
        self.epochs = epochs
        self.data_loader = data_loader
        self.sampler = sampler
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.config = config
        self.device = device
        self.finish_train = False

    def run(self):
        self.tqdm = tqdm(initial=self.steps, total=self.config["train_max_steps"], desc="[train]")
        while True:
            self._train_epoch()
            if self.finish_train:
                break
        self.tqdm.close()

    def _train_step(self, batch):
        x, y = batch
        x = tuple([x_.to(self.device) for x_ in x])
        y = y.to(self.device)
        y_ = self.model["generator"](*x)
        gen_loss = self.criterion["stft"](y_.squeeze(1), y.squeeze(1))
        self.optimizer["generator"].zero_grad()
        gen_loss.backward()
        self.optimizer["generator"].step()
        self.scheduler["generator"].step()
        self.steps += 1
        self.tqdm.update(1)
        self._check_train_finish()

    def _train_epoch(self):
        for train_steps_per_epoch, batch in enumerate(self.data_loader["train"], 1):
            self._train_step(batch)
            if self.finish_train:
                return
        self.epochs += 1
        logging.info(f"(Steps: {self.steps}) Finished {self.epochs} epoch training "
                     f"({train_steps_per_epoch} steps per epoch).")

    def _check_train_finish(self):
        if self.steps >= self.config["train_max_steps"]:
            self.finish_train = True


def main(config, train_dataset, model, criterion, optimizer, scheduler, device):
    torch.distributed.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(config["rank"])
    sampler = {"train": DistributedSampler(dataset=train_dataset, num_replicas=config["world_size"],
                                           rank=config["rank"], shuffle=True)}
    data_loader = {"train": DataLoader(dataset=train_dataset, shuffle=False, batch_size=config["batch_size"],
                                       num_workers=config["num_workers"], sampler=sampler["train"],
                                       pin_memory=config["pin_memory"])}
    trainer = Trainer(steps=0, epochs=0, data_loader=data_loader, sampler=sampler, model=model,
                      criterion=criterion, optimizer=optimizer, scheduler=scheduler, config=config,
                      device=device)
    trainer.run()
