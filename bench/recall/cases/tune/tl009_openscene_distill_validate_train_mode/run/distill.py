import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from MinkowskiEngine import SparseTensor

from dataset.feature_loader import FusedFeatureLoader, collation_fn
from dataset.point_loader import Point3DLoader, collation_fn_eval_all
from models.disnet import DisNet
from util import config
from util.util import AverageMeter, intersectionAndUnionGPU, poly_learning_rate, save_checkpoint, extract_clip_feature


def main_worker(args):
    model = DisNet(cfg=args).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.base_lr)
    criterion = nn.CrossEntropyLoss(ignore_index=args.ignore_label).cuda()

    train_data = FusedFeatureLoader(datapath_prefix=args.data_root, datapath_prefix_feat=args.data_root_2d_fused_feature,
                                    voxel_size=args.voxel_size, split='train', aug=args.aug)
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=args.batch_size, shuffle=True,
                                               num_workers=args.workers, pin_memory=True, drop_last=True,
                                               collate_fn=collation_fn)
    val_data = Point3DLoader(datapath_prefix=args.data_root, voxel_size=args.voxel_size, split='val', aug=False,
                             eval_all=True)
    val_loader = torch.utils.data.DataLoader(val_data, batch_size=args.batch_size_val, shuffle=False,
                                             num_workers=args.workers, pin_memory=True,
                                             collate_fn=collation_fn_eval_all)

    text_features = extract_clip_feature(args.labelset, model_name=args.clip_model).cuda()

    best_iou = 0
    for epoch in range(args.start_epoch, args.epochs):
        loss_train = distill(train_loader, model, optimizer, epoch, args)
        if args.evaluate and (epoch + 1) % args.eval_freq == 0:
            loss_val, miou_val = validate(val_loader, model, criterion, text_features, args)
            if miou_val > best_iou:
                best_iou = miou_val
                save_checkpoint({'epoch': epoch + 1, 'state_dict': model.state_dict(),
                                 'optimizer': optimizer.state_dict(), 'best_iou': best_iou},
                                True, os.path.join(args.save_path, 'model'))


def distill(train_loader, model, optimizer, epoch, args):
    loss_meter = AverageMeter()
    model.train()
    max_iter = args.epochs * len(train_loader)
    for i, batch_data in enumerate(train_loader):
        (coords, feat, label_3d, feat_3d, mask) = batch_data
        coords[:, 1:4] += (torch.rand(3) * 100).type_as(coords)
        sinput = SparseTensor(feat.cuda(non_blocking=True), coords.cuda(non_blocking=True))
        feat_3d, mask = feat_3d.cuda(non_blocking=True), mask.cuda(non_blocking=True)

        output_3d = model(sinput)
        output_3d = output_3d[mask]
        loss = (1 - torch.nn.CosineSimilarity()(output_3d, feat_3d)).mean()

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        loss_meter.update(loss.item(), args.batch_size)
        current_iter = epoch * len(train_loader) + i + 1
        current_lr = poly_learning_rate(args.base_lr, current_iter, max_iter, power=args.power)
        for param_group in optimizer.param_groups:
            param_group['lr'] = current_lr
    return loss_meter.avg


def validate(val_loader, model, criterion, text_features, args):
    torch.backends.cudnn.enabled = False
    loss_meter = AverageMeter()
    intersection_meter = AverageMeter()
    union_meter = AverageMeter()

    with torch.no_grad():
        for batch_data in val_loader:
            (coords, feat, label, inds_reverse) = batch_data
            sinput = SparseTensor(feat.cuda(non_blocking=True), coords.cuda(non_blocking=True))
            label = label.cuda(non_blocking=True)
            output = model(sinput)
            output = output[inds_reverse, :]
            output = output.half() @ text_features.t()
            loss = criterion(output, label)
            output = torch.max(output, 1)[1]

            intersection, union, target = intersectionAndUnionGPU(output, label.detach(), args.classes,
                                                                  args.ignore_label)
            intersection_meter.update(intersection.cpu().numpy())
            union_meter.update(union.cpu().numpy())
            loss_meter.update(loss.item(), args.batch_size)

    iou_class = intersection_meter.sum / (union_meter.sum + 1e-10)
    mIoU = np.mean(iou_class)
    return loss_meter.avg, mIoU


if __name__ == '__main__':
    main_worker(config.get_parser())
