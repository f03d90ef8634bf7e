import os
import sys

import numpy as np
import torch
import torch.optim as optim
from torch.utils.data import DataLoader

from models.ap_helper import APCalculator, parse_groundtruths, parse_predictions
from models.loss_helper import get_loss
from models.votenet import VoteNet
from pointnet2.pytorch_utils import BNMomentumScheduler
from sunrgbd.sunrgbd_detection_dataset import MAX_NUM_OBJ, SunrgbdDatasetConfig, SunrgbdDetectionVotesDataset

BATCH_SIZE = 8
MAX_EPOCH = 180
BASE_LEARNING_RATE = 0.001
BN_DECAY_STEP = 20
BN_DECAY_RATE = 0.5
LR_DECAY_STEPS = [80, 120, 160]
LR_DECAY_RATES = [0.1, 0.1, 0.1]

DATASET_CONFIG = SunrgbdDatasetConfig()
TRAIN_DATASET = SunrgbdDetectionVotesDataset("train", num_points=20000, augment=True)
TEST_DATASET = SunrgbdDetectionVotesDataset("val", num_points=20000, augment=False)
TRAIN_DATALOADER = DataLoader(TRAIN_DATASET, batch_size=BATCH_SIZE, shuffle=True, num_workers=4)
TEST_DATALOADER = DataLoader(TEST_DATASET, batch_size=BATCH_SIZE, shuffle=True, num_workers=4)

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
net = VoteNet(num_class=DATASET_CONFIG.num_class,
              num_heading_bin=DATASET_CONFIG.num_heading_bin,
              num_size_cluster=DATASET_CONFIG.num_size_cluster,
              mean_size_arr=DATASET_CONFIG.mean_size_arr,
              num_proposal=256, input_feature_dim=1, vote_factor=1, sampling="vote_fps")
net.to(device)
criterion = get_loss
optimizer = optim.Adam(net.parameters(), lr=BASE_LEARNING_RATE, weight_decay=0)

bn_lbmd = lambda it: max(0.5 * BN_DECAY_RATE ** (int(it / BN_DECAY_STEP)), 0.001)
bnm_scheduler = BNMomentumScheduler(net, bn_lambda=bn_lbmd, last_epoch=-1)

CONFIG_DICT = {"remove_empty_box": False, "use_3d_nms": True, "nms_iou": 0.25,
               "use_old_type_nms": False, "cls_nms": True, "per_class_proposal": True,
               "conf_thresh": 0.05, "dataset_config": DATASET_CONFIG}
EPOCH_CNT = 0


def get_current_lr(epoch):
    lr = BASE_LEARNING_RATE
    for i, lr_decay_epoch in enumerate(LR_DECAY_STEPS):
        if epoch >= lr_decay_epoch:
            lr *= LR_DECAY_RATES[i]
    return lr


def adjust_learning_rate(optimizer, epoch):
    lr = get_current_lr(epoch)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


def train_one_epoch():
    stat_dict = {}
    adjust_learning_rate(optimizer, EPOCH_CNT)
    bnm_scheduler.step()
    net.train()
    for batch_idx, batch_data_label in enumerate(TRAIN_DATALOADER):
        for key in batch_data_label:
            batch_data_label[key] = batch_data_label[key].to(device)

        optimizer.zero_grad()
        inputs = {"point_clouds": batch_data_label["point_clouds"]}
        end_points = net(inputs)

        for key in batch_data_label:
            assert key not in end_points
            end_points[key] = batch_data_label[key]
        loss, end_points = criterion(end_points, DATASET_CONFIG)
        loss.backward()
        optimizer.step()

        for key in end_points:
            if "loss" in key or "acc" in key or "ratio" in key:
                if key not in stat_dict:
                    stat_dict[key] = 0
                stat_dict[key] += end_points[key].item()


def evaluate_one_epoch():
    stat_dict = {}
    ap_calculator = APCalculator(ap_iou_thresh=0.25, class2type_map=DATASET_CONFIG.class2type)
    net.eval()
    for batch_idx, batch_data_label in enumerate(TEST_DATALOADER):
        for key in batch_data_label:
            batch_data_label[key] = batch_data_label[key].to(device)

        inputs = {"point_clouds": batch_data_label["point_clouds"]}
        with torch.no_grad():
            end_points = net(inputs)

        for key in batch_data_label:
            assert key not in end_points
            end_points[key] = batch_data_label[key]
        loss, end_points = criterion(end_points, DATASET_CONFIG)

        for key in end_points:
            if "loss" in key or "acc" in key or "ratio" in key:
                if key not in stat_dict:
                    stat_dict[key] = 0
                stat_dict[key] += end_points[key].item()

        batch_pred_map_cls = parse_predictions(end_points, CONFIG_DICT)
        batch_gt_map_cls = parse_groundtruths(end_points, CONFIG_DICT)
        ap_calculator.step(batch_pred_map_cls, batch_gt_map_cls)

    metrics_dict = ap_calculator.compute_metrics()
    mean_loss = stat_dict["loss"] / float(batch_idx + 1)
    return mean_loss


def train(start_epoch):
    global EPOCH_CNT
    for epoch in range(start_epoch, MAX_EPOCH):
        EPOCH_CNT = epoch
        np.random.seed()
        train_one_epoch()
        if EPOCH_CNT == 0 or EPOCH_CNT % 10 == 9:  # Eval every 10 epochs
            loss = evaluate_one_epoch()
        torch.save({"epoch": epoch + 1, "model_state_dict": net.state_dict()}, "checkpoint.tar")


if __name__ == "__main__":
    train(0)
