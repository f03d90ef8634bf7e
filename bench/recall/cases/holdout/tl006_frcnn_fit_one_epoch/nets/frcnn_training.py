from collections import namedtuple

import torch
from torch import nn
from torch.nn import functional as F

LossTuple = namedtuple('LossTuple', ['rpn_loc_loss', 'rpn_cls_loss', 'roi_loc_loss', 'roi_cls_loss', 'total_loss'])


class FasterRCNNTrainer(nn.Module):
    def __init__(self, faster_rcnn, optimizer):
        super(FasterRCNNTrainer, self).__init__()
        self.faster_rcnn = faster_rcnn
        self.rpn_sigma = 3
        self.roi_sigma = 1
        self.optimizer = optimizer

    def forward(self, imgs, bboxes, labels, scale):
        _, _, H, W = imgs.shape
        img_size = (H, W)
        features = self.faster_rcnn.extractor(imgs)
        rpn_locs, rpn_scores, rois, roi_indices, anchor = self.faster_rcnn.rpn(features, img_size, scale)
        gt_rpn_loc, gt_rpn_label = self.faster_rcnn.anchor_targets(bboxes[0], anchor, img_size)
        rpn_loc_loss = F.smooth_l1_loss(rpn_locs[0], gt_rpn_loc)
        rpn_cls_loss = F.cross_entropy(rpn_scores[0], gt_rpn_label, ignore_index=-1)
        sample_roi, gt_roi_loc, gt_roi_label = self.faster_rcnn.proposal_targets(rois, bboxes[0], labels[0])
        roi_cls_loc, roi_score = self.faster_rcnn.head(features, sample_roi, torch.zeros(len(sample_roi)))
        roi_loc_loss = F.smooth_l1_loss(roi_cls_loc.view(roi_cls_loc.shape[0], -1, 4)[:, 0], gt_roi_loc)
        roi_cls_loss = nn.CrossEntropyLoss()(roi_score, gt_roi_label)
        losses = [rpn_loc_loss, rpn_cls_loss, roi_loc_loss, roi_cls_loss]
        losses = losses + [sum(losses)]
        return LossTuple(*losses)

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses.total_loss.backward()
        self.optimizer.step()
        return losses
