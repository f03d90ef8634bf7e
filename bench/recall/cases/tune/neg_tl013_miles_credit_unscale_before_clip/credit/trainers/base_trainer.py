import logging
import os

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


class BaseTrainer:
    def __init__(self, model: torch.nn.Module, rank: int, module: bool = False):
        self.model = model
        self.rank = rank
        self.device = torch.device(f"cuda:{rank % torch.cuda.device_count()}") if torch.cuda.is_available() else torch.device("cpu")
        if module:
            self.model = self.model.module

    def train_one_epoch(self, epoch, conf, trainloader, optimizer, criterion, scaler, scheduler, metrics):
        raise NotImplementedError

    def validate(self, epoch, conf, valid_loader, criterion, metrics):
        raise NotImplementedError

    def fit(self, conf, train_loader, valid_loader, optimizer, train_criterion, valid_criterion,
            scaler, scheduler, metrics, trial=False):
        start_epoch = conf["trainer"].get("start_epoch", 0)
        epochs = conf["trainer"]["epochs"]
        save_loc = os.path.expandvars(conf["save_loc"])
        results_dict = {"train_loss": [], "valid_loss": []}
        for epoch in range(start_epoch, epochs):
            logger.info(f"Beginning epoch {epoch}")
            if conf["trainer"]["mode"] in ["fsdp", "ddp"]:
                train_loader.sampler.set_epoch(epoch)
            train_results = self.train_one_epoch(epoch, conf, train_loader, optimizer, train_criterion,
                                                 scaler, scheduler, metrics)
            valid_results = self.validate(epoch, conf, valid_loader, valid_criterion, metrics)
            results_dict["train_loss"].append(train_results["train_loss"])
            results_dict["valid_loss"].append(valid_results["valid_loss"])
            if self.rank == 0:
                torch.save({"epoch": epoch, "model_state_dict": self.model.state_dict(),
                            "optimizer_state_dict": optimizer.state_dict()}, f"{save_loc}/checkpoint.pt")
            if conf["trainer"]["mode"] in ["fsdp", "ddp"]:
                dist.barrier()
        return results_dict
