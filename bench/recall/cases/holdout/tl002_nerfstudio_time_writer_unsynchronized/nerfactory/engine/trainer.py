import torch

from nerfactory.data.dataloader import setup_dataset_train
from nerfactory.graphs.base import setup_graph
from nerfactory.optimizers.optimizers import setup_optimizers
from nerfactory.utils import writer
from nerfactory.utils.writer import EventName, TimeWriter


class Trainer:
    """Training class"""

    def __init__(self, config, local_rank=0, world_size=1):
        self.config = config
        self.local_rank = local_rank
        self.world_size = world_size
        self.device = "cpu" if world_size == 0 else f"cuda:{local_rank}"
        self.mixed_precision = self.config.trainer.mixed_precision
        self.grad_scaler = torch.cuda.amp.GradScaler(enabled=self.mixed_precision)

    def setup(self):
        self.train_image_dataset, self.train_ray_generator = setup_dataset_train(self.config.data, self.device)
        self.graph = setup_graph(self.config.graph, self.device)
        self.optimizers = setup_optimizers(self.config.optimizers, self.graph.get_param_groups())

    def train(self):
        num_iterations = self.config.trainer.max_num_iterations
        iter_dataloader_train = iter(self.train_ray_generator)
        with TimeWriter(writer, EventName.TOTAL_TRAIN_TIME):
            for step in range(num_iterations):
                with TimeWriter(writer, EventName.ITER_LOAD_TIME, step=step):
                    ray_indices, batch = next(iter_dataloader_train)

                with TimeWriter(writer, EventName.ITER_TRAIN_TIME, step=step) as t:
                    loss_dict = self.train_iteration(ray_indices, batch, step)
                writer.put_scalar(name=EventName.RAYS_PER_SEC,
                                  scalar=self.config.data.dataloader.num_rays_per_batch / t.duration,
                                  step=step)

    def train_iteration(self, ray_indices, batch, step):
        self.optimizers.zero_grad_all()
        with torch.autocast(device_type=ray_indices.device.type, enabled=self.mixed_precision):
            _, loss_dict = self.graph.forward(ray_indices, batch=batch)
            loss = sum(loss_dict.values())
        self.grad_scaler.scale(loss).backward()
        self.optimizers.optimizer_scaler_step_all(self.grad_scaler)
        self.grad_scaler.update()
        self.optimizers.scheduler_step_all(step)
        return loss_dict
