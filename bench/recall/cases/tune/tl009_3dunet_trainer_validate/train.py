import torch
import torch.nn as nn
import yaml

from pytorch3dunet.datasets.hdf5 import get_train_loaders
from pytorch3dunet.unet3d.metrics import MeanIoU
from pytorch3dunet.unet3d.model import UNet3D
from pytorch3dunet.unet3d.trainer import UNet3DTrainer


def main(config_path='train_config_bn_dropout.yaml'):
    with open(config_path) as f:
        config = yaml.safe_load(f)
    device = torch.device(config.get('device', 'cuda'))

    # the reporter's configuration: batch normalization ('b') and a dropout ('d') after the bottleneck
    model = UNet3D(in_channels=1, out_channels=2, f_maps=32, layer_order=config['model'].get('layer_order', 'cbrd'))
    model = model.to(device)

    loaders = get_train_loaders(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config['optimizer']['learning_rate'],
                                 weight_decay=config['optimizer']['weight_decay'])
    lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='max', factor=0.2, patience=20)
    loss_criterion = nn.BCEWithLogitsLoss()
    eval_criterion = MeanIoU()

    trainer = UNet3DTrainer(model, optimizer, lr_scheduler, loss_criterion, eval_criterion, device, loaders,
                            checkpoint_dir=config['trainer']['checkpoint_dir'],
                            max_num_epochs=config['trainer']['epochs'],
                            validate_after_iters=config['trainer']['validate_after_iters'])
    trainer.fit()


if __name__ == '__main__':
    main()
