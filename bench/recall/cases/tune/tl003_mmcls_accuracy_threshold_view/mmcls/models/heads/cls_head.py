import torch.nn as nn
import torch.nn.functional as F

from ..losses import Accuracy


class ClsHead(nn.Module):
    """Classification head: a linear layer, cross entropy and the top-k accuracy."""

    def __init__(self, in_channels, num_classes, topk=(1, 5)):
        super().__init__()
        self.fc = nn.Linear(in_channels, num_classes)
        self.topk = topk
        self.compute_accuracy = Accuracy(topk=self.topk)

    def loss(self, cls_score, gt_label):
        num_samples = len(cls_score)
        losses = dict()
        losses['loss'] = F.cross_entropy(cls_score, gt_label)
        acc = self.compute_accuracy(cls_score, gt_label)
        assert len(acc) == len(self.topk)
        losses['accuracy'] = {f'top-{k}': a for k, a in zip(self.topk, acc)}
        losses['num_samples'] = num_samples
        return losses

    def forward_train(self, x, gt_label):
        cls_score = self.fc(x)
        return self.loss(cls_score, gt_label)
