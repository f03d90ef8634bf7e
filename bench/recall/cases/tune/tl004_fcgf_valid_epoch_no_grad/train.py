import logging

import torch

from config import get_config
from lib.data_loaders import make_data_loader
from lib.trainer import HardestContrastiveLossTrainer

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")


def main(config):
    train_loader = make_data_loader(config, config.train_phase, config.batch_size, num_threads=config.train_num_thread)
    val_loader = make_data_loader(config, config.val_phase, 1, num_threads=config.val_num_thread)
    trainer = HardestContrastiveLossTrainer(config=config, data_loader=train_loader, val_data_loader=val_loader)
    trainer.train()


if __name__ == "__main__":
    main(get_config())
