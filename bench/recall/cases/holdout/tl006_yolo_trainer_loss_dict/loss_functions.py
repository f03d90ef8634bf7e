import torch
import torch.nn.functional as F
from torch import nn


class YOLOLoss(nn.Module):
    def __init__(self, cfg, vec2box):
        super().__init__()
        self.vec2box = vec2box
        self.box_weight = cfg.task.loss.objective["BoxLoss"]
        self.dfl_weight = cfg.task.loss.objective["DFLoss"]
        self.cls_weight = cfg.task.loss.objective["BCELoss"]

    def forward(self, predicts, targets):
        predicts_cls, predicts_anc, predicts_box = predicts
        aligned_cls, aligned_box, valid_masks = self.vec2box.align(targets)
        loss_cls = F.binary_cross_entropy_with_logits(predicts_cls, aligned_cls)
        loss_iou = (1.0 - torch.cosine_similarity(predicts_box[valid_masks], aligned_box[valid_masks])).mean()
        loss_dfl = F.smooth_l1_loss(predicts_anc[valid_masks], aligned_box[valid_masks])
        return loss_iou, loss_dfl, loss_cls


class DualLoss:
    def __init__(self, cfg, vec2box):
        self.loss = YOLOLoss(cfg, vec2box)
        self.aux_rate = cfg.task.loss.aux

    def __call__(self, aux_predicts, main_predicts, targets):
        aux_iou, aux_dfl, aux_cls = self.loss(aux_predicts, targets)
        main_iou, main_dfl, main_cls = self.loss(main_predicts, targets)
        loss_dict = {
            "BoxLoss": self.loss.box_weight * (aux_iou * self.aux_rate + main_iou),
            "DFLoss": self.loss.dfl_weight * (aux_dfl * self.aux_rate + main_dfl),
            "BCELoss": self.loss.cls_weight * (aux_cls * self.aux_rate + main_cls),
        }
        loss_sum = sum(list(loss_dict.values())) / len(loss_dict)
        return loss_sum, loss_dict


def create_loss_function(cfg, vec2box):
    return DualLoss(cfg, vec2box)
