import torch
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import datasets
from sam import SAM


def prepare_training(config):
    model = SAM(**config['model']['args']).to(config['model']['args']['device'])
    optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=config['lr'])
    model.optimizer = optimizer
    lr_scheduler = CosineAnnealingLR(optimizer, config['epoch_max'], eta_min=config.get('lr_min'))
    return model, optimizer, 1, lr_scheduler


def make_data_loaders(config):
    train_set = datasets.make(config['train_dataset'])
    val_set = datasets.make(config['val_dataset'])
    sampler = DistributedSampler(train_set) if config['model']['args']['device'] == 'cuda' else None
    train_loader = DataLoader(train_set, batch_size=config['batch_size'], sampler=sampler, num_workers=8,
                              pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=config['batch_size'], num_workers=8, pin_memory=True)
    return train_loader, val_loader
