# Reconstructed after the deepmd-pytorch PR's description: the trainer as it set up DDP
# under torchrun before the PR (init_process_group, then DDP with device_ids, without
# torch.cuda.set_device). The model, loss and data modules are imported and not included.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from deepmd_pt.model.model import get_model
from deepmd_pt.loss import EnergyStdLoss
from deepmd_pt.utils.dataloader import DpLoaderSet, collate_batch

LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
DEVICE = torch.device(f"cuda:{LOCAL_RANK}")


class Trainer(object):
    def __init__(self, config, training_data):
        training_params = config["training"]
        self.num_steps = training_params["numb_steps"]
        self.disp_freq = training_params.get("disp_freq", 1000)
        self.lr = config["learning_rate"]["start_lr"]

        self.rank = 0
        if dist.is_available() and os.environ.get("WORLD_SIZE") is not None:
            dist.init_process_group(backend="nccl")
            self.rank = dist.get_rank()

        self.training_data = training_data
        self.sampler = DistributedSampler(training_data) if dist.is_initialized() else None
        self.training_dataloader = DataLoader(
            training_data,
            sampler=self.sampler,
            batch_size=None,
            num_workers=4,
            collate_fn=collate_batch,
            pin_memory=True,
        )

        self.model = get_model(config["model"]).to(DEVICE)
        self.loss = EnergyStdLoss(**config["loss"])
        if dist.is_initialized():
            self.wrapper = DDP(self.model, device_ids=[LOCAL_RANK], find_unused_parameters=True, output_device=LOCAL_RANK)
        else:
            self.wrapper = self.model
        self.optimizer = torch.optim.Adam(self.wrapper.parameters(), lr=self.lr)

    def run(self):
        self.wrapper.train()
        step = 0
        epoch = 0
        while step < self.num_steps:
            if self.sampler is not None:
                self.sampler.set_epoch(epoch)
            for batch in self.training_dataloader:
                batch = {k: v.to(DEVICE) if torch.is_tensor(v) else v for k, v in batch.items()}
                self.optimizer.zero_grad()
                prediction = self.wrapper(**batch)
                loss, more_loss = self.loss(prediction, batch, self.lr)
                loss.backward()
                self.optimizer.step()
                if self.rank == 0 and step % self.disp_freq == 0:
                    print(f"step={step} loss={loss.item():.4f}")
                step += 1
                if step >= self.num_steps:
                    break
            epoch += 1


def train(config):
    training_data = DpLoaderSet(config["training"]["training_data"]["systems"], config["training"]["training_data"]["batch_size"], config["model"])
    trainer = Trainer(config, training_data)
    trainer.run()
