import time
from collections import defaultdict

import numpy as np
import torch

import utils
from average_meter import AverageMeter
from model.hidden import Hidden
from options import HiDDenConfiguration, TrainingOptions


def train(model: Hidden, device: torch.device, hidden_config: HiDDenConfiguration, train_options: TrainingOptions,
          this_run_folder: str, tb_logger):
    train_data, val_data = utils.get_data_loaders(hidden_config, train_options)
    for epoch in range(train_options.start_epoch, train_options.number_of_epochs + 1):
        training_losses = defaultdict(AverageMeter)
        epoch_start = time.time()
        for image, _ in train_data:
            image = image.to(device)
            message = torch.Tensor(np.random.choice([0, 1], (image.shape[0], hidden_config.message_length))).to(device)
            losses, _ = model.train_on_batch([image, message])
            for name, loss in losses.items():
                training_losses[name].update(loss)
        print(f"Epoch {epoch} training done in {time.time() - epoch_start:.1f}s")

        validation_losses = defaultdict(AverageMeter)
        for image, _ in val_data:
            image = image.to(device)
            message = torch.Tensor(np.random.choice([0, 1], (image.shape[0], hidden_config.message_length))).to(device)
            losses, (encoded_images, noised_images, decoded_messages) = model.validate_on_batch([image, message])
            for name, loss in losses.items():
                validation_losses[name].update(loss)
        utils.print_progress(validation_losses)
        utils.save_checkpoint(model, train_options.experiment_name, epoch, this_run_folder + "/checkpoints")
