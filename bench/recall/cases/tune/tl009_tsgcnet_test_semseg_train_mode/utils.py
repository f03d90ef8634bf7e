from collections import defaultdict

import numpy as np
import torch
from torch.autograd import Variable
from tqdm import tqdm


def compute_cat_iou(pred, target, iou_tabel):
    iou_list = []
    target = target.cpu().data.numpy()
    for j in range(pred.size(0)):
        batch_pred = pred[j]
        batch_target = target[j]
        batch_choice = batch_pred.data.max(1)[1].cpu().data.numpy()
        for cat in np.unique(batch_target):
            intersection = np.sum(np.logical_and(batch_choice == cat, batch_target == cat))
            union = float(np.sum(np.logical_or(batch_choice == cat, batch_target == cat)))
            iou = intersection / union if not union == 0 else 1
            iou_tabel[cat, 0] += iou
            iou_tabel[cat, 1] += 1
            iou_list.append(iou)
    return iou_tabel, iou_list


def test_semseg(model, loader, num_classes=8, gpu=True, generate_ply=False):
    iou_tabel = np.zeros((num_classes, 3))
    metrics = defaultdict(lambda: list())
    for batch_id, (index, points, label_face, label_face_onehot, name, raw_points_face) in tqdm(
            enumerate(loader), total=len(loader), smoothing=0.9):
        batchsize, num_point, _ = points.size()
        coordinate = points.transpose(2, 1)
        coordinate, label_face = Variable(coordinate.float()), Variable(label_face.long())
        coordinate, label_face = coordinate.cuda(), label_face.cuda()

        with torch.no_grad():
            pred = model(coordinate[:, :12, :], coordinate[:, 12:, :])

        iou_tabel, iou_list = compute_cat_iou(pred, label_face, iou_tabel)
        pred = pred.contiguous().view(-1, num_classes)
        label_face = label_face.view(-1, 1)[:, 0]
        pred_choice = pred.data.max(1)[1]
        correct = pred_choice.eq(label_face.data).cpu().sum()
        metrics["accuracy"].append(correct.item() / (batchsize * num_point))

    iou_tabel[:, 2] = iou_tabel[:, 0] / iou_tabel[:, 1]
    metrics["accuracy"] = np.mean(metrics["accuracy"])
    metrics["iou"] = np.mean(iou_tabel[:, 2])
    return metrics, metrics["iou"]
