import gc
import logging
from collections import defaultdict

import numpy as np
import torch
import torch.distributed as dist
import torch.fft
import tqdm
from torch.cuda.amp import autocast

from credit.data import concat_and_reshape, reshape_only
from credit.trainers.base_trainer import BaseTrainer

logger = logging.getLogger(__name__)


class Trainer(BaseTrainer):
    def __init__(self, model: torch.nn.Module, rank: int, module: bool = False):
        super().__init__(model, rank, module)

    def train_one_epoch(self, epoch, conf, trainloader, optimizer, criterion, scaler, scheduler, metrics):
        batches_per_epoch = conf["trainer"]["batches_per_epoch"]
        grad_accum_every = conf["trainer"]["grad_accum_every"]
        grad_max_norm = conf["trainer"]["grad_max_norm"]
        amp = conf["trainer"]["amp"]
        distributed = conf["trainer"]["mode"] in ["fsdp", "ddp"]
        forecast_length = conf["data"]["forecast_len"]

        self.model.train()
        dl = iter(trainloader)
        results_dict = defaultdict(list)
        batch_group_generator = tqdm.tqdm(range(batches_per_epoch), total=batches_per_epoch, leave=True)

        for steps in range(batches_per_epoch):
            logs = {}
            loss = 0
            for i in range(grad_accum_every):
                batch = next(dl)
                with autocast(enabled=amp):
                    x = concat_and_reshape(batch["x"], batch["x_surf"]).to(self.device)
                    y = concat_and_reshape(batch["y"], batch["y_surf"]).to(self.device)
                    for _ in range(forecast_length + 1):
                        y_pred = self.model(x)
                        x = y_pred.detach()
                    loss = criterion(y.to(y_pred.dtype), y_pred).mean()
                    accum_log(logs, {"loss": loss.item() / grad_accum_every})

                if distributed:
                    torch.distributed.barrier()
                scaler.scale(loss / grad_accum_every).backward()

            if distributed:
                torch.distributed.barrier()

            if grad_max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=grad_max_norm)

            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()

            batch_loss = torch.Tensor([logs["loss"]]).cuda(self.device)
            if distributed:
                dist.all_reduce(batch_loss, dist.ReduceOp.AVG, async_op=False)
            results_dict["train_loss"].append(batch_loss[0].item())
            if conf["trainer"]["use_scheduler"] and conf["trainer"]["scheduler"]["scheduler_type"] == "cosine-annealing":
                scheduler.step()
            batch_group_generator.update(1)
            batch_group_generator.set_description("Epoch: {} train_loss: {:.6f}".format(epoch, np.mean(results_dict["train_loss"])))

        batch_group_generator.close()
        torch.cuda.empty_cache()
        gc.collect()
        return {"train_loss": np.mean(results_dict["train_loss"])}

    def validate(self, epoch, conf, valid_loader, criterion, metrics):
        self.model.eval()
        distributed = conf["trainer"]["mode"] in ["fsdp", "ddp"]
        results_dict = defaultdict(list)
        with torch.no_grad():
            for batch in valid_loader:
                x = concat_and_reshape(batch["x"], batch["x_surf"]).to(self.device)
                y = concat_and_reshape(batch["y"], batch["y_surf"]).to(self.device)
                y_pred = self.model(x)
                loss = criterion(y.to(y_pred.dtype), y_pred).mean()
                batch_loss = torch.Tensor([loss.item()]).cuda(self.device)
                if distributed:
                    torch.distributed.barrier()
                results_dict["valid_loss"].append(batch_loss[0].item())
        return {"valid_loss": np.mean(results_dict["valid_loss"])}


def accum_log(log, new_logs):
    for key, new_value in new_logs.items():
        old_value = log.get(key, 0.0)
        log[key] = old_value + new_value
    return log
