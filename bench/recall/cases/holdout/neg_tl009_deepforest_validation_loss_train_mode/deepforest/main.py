import pandas as pd
import pytorch_lightning as pl
import torch

from deepforest import dataset, evaluate as evaluate_iou, model


class deepforest(pl.LightningModule):
    """Class for training and predicting tree crowns in RGB images."""

    def __init__(self, num_classes=1, label_dict={"Tree": 0}, config=None):
        super().__init__()
        self.config = config
        self.num_classes = num_classes
        self.label_dict = label_dict
        self.model = model.create_model(num_classes=num_classes,
                                        nms_thresh=config["nms_thresh"],
                                        score_thresh=config["score_thresh"])
        self.predictions = []
        self.save_hyperparameters()

    def train_dataloader(self):
        ds = dataset.TreeDataset(csv_file=self.config["train"]["csv_file"],
                                 root_dir=self.config["train"]["root_dir"],
                                 transforms=dataset.get_transform(augment=True),
                                 label_dict=self.label_dict)
        return torch.utils.data.DataLoader(ds, batch_size=self.config["batch_size"], shuffle=True,
                                           collate_fn=dataset.collate_fn,
                                           num_workers=self.config["workers"])

    def val_dataloader(self):
        ds = dataset.TreeDataset(csv_file=self.config["validation"]["csv_file"],
                                 root_dir=self.config["validation"]["root_dir"],
                                 transforms=dataset.get_transform(augment=False),
                                 label_dict=self.label_dict)
        return torch.utils.data.DataLoader(ds, batch_size=self.config["batch_size"], shuffle=False,
                                           collate_fn=dataset.collate_fn,
                                           num_workers=self.config["workers"])

    def training_step(self, batch, batch_idx):
        path, images, targets = batch
        loss_dict = self.model.forward(images, targets)
        losses = sum([loss for loss in loss_dict.values()])
        return losses

    def validation_step(self, batch, batch_idx):
        try:
            path, images, targets = batch
        except ValueError:
            return None

        # Get loss from "train" mode for batch norm statistics, but don't allow optimization
        self.model.train()
        with torch.no_grad():
            loss_dict = self.model.forward(images, targets)

        losses = sum([loss for loss in loss_dict.values()])

        self.model.eval()
        preds = self.model.forward(images)
        for key, value in loss_dict.items():
            self.log("val_{}".format(key), value, on_epoch=True)
        self.predictions.append(preds)
        return losses

    def on_validation_epoch_end(self):
        self.predictions = []

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=self.config["train"]["lr"], momentum=0.9)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=10)
        return {"optimizer": optimizer, "lr_scheduler": scheduler, "monitor": "val_classification"}


def fit(config):
    m = deepforest(config=config)
    trainer = pl.Trainer(max_epochs=config["train"]["epochs"], accelerator="gpu", devices=1)
    trainer.fit(m)
    return m
