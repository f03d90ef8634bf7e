# Reduced and partly reconstructed: the wrapper's training step returns the model's loss
# tensor in a dict; the epoch end averages the losses of all batches. The model, dataset,
# optimizer and logging factories are imported and not included.
import torch

from packnet_sfm.models.model_utils import setup_model, setup_dataset, setup_dataloader
from packnet_sfm.utils.reduce import reduce_dict, average_loss_and_metrics


class ModelWrapper(torch.nn.Module):
    def __init__(self, config, resume=None, logger=None, load_datasets=True):
        super().__init__()
        self.config = config
        self.logger = logger
        self.current_epoch = 0
        self.model = setup_model(config.model, config.prepared if hasattr(config, 'prepared') else None)
        self.train_dataset = setup_dataset(config.datasets.train, 'train') if load_datasets else None
        self.optimizer = None
        self.scheduler = None

    def configure_optimizers(self):
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.config.model.optimizer.depth.lr)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=30, gamma=0.5)

    def train_dataloader(self):
        return setup_dataloader(self.train_dataset, self.config.datasets.train, 'train')[0]

    def training_step(self, batch, *args):
        output = self.model(batch, progress=self.progress)
        return {
            'loss': output['loss'],
            'metrics': output['metrics']
        }

    def training_epoch_end(self, output_batch):
        loss_and_metrics = average_loss_and_metrics(output_batch, 'avg_train')
        loss_and_metrics = reduce_dict(loss_and_metrics, to_item=True)
        if self.logger:
            self.logger.log_metrics({**loss_and_metrics})
        return {**loss_and_metrics}

    @property
    def progress(self):
        return self.current_epoch / self.config.arch.max_epochs
