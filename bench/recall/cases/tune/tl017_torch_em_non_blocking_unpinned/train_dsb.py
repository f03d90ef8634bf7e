import torch

import torch_em
from torch_em.loss import DiceLoss
from torch_em.model import UNet2d

model = UNet2d(in_channels=1, out_channels=2, initial_features=64)
train_loader = torch_em.default_segmentation_loader("train.h5", "raw", "train.h5", "labels", batch_size=8,
                                                    patch_shape=(256, 256))
val_loader = torch_em.default_segmentation_loader("val.h5", "raw", "val.h5", "labels", batch_size=8,
                                                  patch_shape=(256, 256), shuffle=False)
trainer = torch_em.DefaultTrainer(name="dsb-unet", train_loader=train_loader, val_loader=val_loader, model=model,
                                  loss=DiceLoss(), optimizer=torch.optim.Adam(model.parameters(), lr=1e-4),
                                  metric=DiceLoss(), device=torch.device("cuda"))
trainer.fit(iterations=25000)
