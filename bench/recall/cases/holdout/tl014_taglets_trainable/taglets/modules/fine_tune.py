import torch
import torch.nn as nn
import torchvision.models as models

from taglets.modules.trainable import Trainable


class FineTuneTaglet(Trainable):
    """Fine-tunes an ImageNet ResNet-50 on the task's labelled images."""

    def __init__(self, task):
        super().__init__(task)
        self.name = 'finetune'
        self.model = models.resnet50(weights=None)
        self.model.fc = nn.Linear(self.model.fc.in_features, len(task.classes))
        self.params_to_update = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(self.params_to_update, lr=self.lr, weight_decay=1e-4)
        self.lr_scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=20, gamma=0.1)


def run(task, train_data, val_data):
    taglet = FineTuneTaglet(task)
    taglet.train(train_data, val_data)
    return taglet
