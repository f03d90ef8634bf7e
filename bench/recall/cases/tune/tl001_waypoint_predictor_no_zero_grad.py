# waypoint-predictor waypoint_predictor.py (trimmed): trains the TRM waypoint predictor on RGB-D panoramas.
import argparse
import os
import random

import torch
from dataloader import RGBDepthPano
from eval import waypoint_eval
from image_encoders import DepthEncoder, RGBEncoder
from tensorboardX import SummaryWriter
from TRM_net import BinaryDistPredictor_TRM, TRM_predict

import utils
from utils import print_progress

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def setup(args):
    torch.manual_seed(0)
    random.seed(0)
    os.makedirs('./checkpoints/%s/snap/' % (args.EXP_ID), exist_ok=True)


class Param():
    def __init__(self):
        self.parser = argparse.ArgumentParser(description='Train waypoint predictor')
        self.parser.add_argument('--EXP_ID', type=str, default='test_0')
        self.parser.add_argument('--ANGLES', type=int, default=24)
        self.parser.add_argument('--NUM_IMGS', type=int, default=24)
        self.parser.add_argument('--NUM_CLASSES', type=int, default=12)
        self.parser.add_argument('--EPOCH', type=int, default=10)
        self.parser.add_argument('--BATCH_SIZE', type=int, default=2)
        self.parser.add_argument('--LEARNING_RATE', type=float, default=1e-4)
        self.parser.add_argument('--WEIGHT', type=int, default=0, help='weight the target map')
        self.parser.add_argument('--HIDDEN_DIM', default=768, type=int)
        self.args = self.parser.parse_args()


def predict_waypoints(args):
    writer = SummaryWriter(log_dir='./checkpoints/%s/tensorboard/' % (args.EXP_ID))

    ''' networks '''
    rgb_encoder = RGBEncoder(resnet_pretrain=True, trainable=False).to(device)
    depth_encoder = DepthEncoder(resnet_pretrain=True, trainable=False).to(device)
    predictor = BinaryDistPredictor_TRM(args=args, hidden_dim=args.HIDDEN_DIM, n_classes=args.NUM_CLASSES).to(device)

    ''' load navigability (gt waypoints, obstacles and weights) '''
    navigability_dict = utils.load_gt_navigability(
        './training_data/%s_*_mp3d_waypoint_twm0.2_obstacle_first_withpos.json' % (args.ANGLES))

    ''' dataloader for rgb and depth images '''
    traindataloader = RGBDepthPano(args, './gen_training_data/rgbd_fov90/train/*/*.pkl', navigability_dict)
    evaldataloader = RGBDepthPano(args, './gen_training_data/rgbd_fov90/val_unseen/*/*.pkl', navigability_dict)
    trainloader = torch.utils.data.DataLoader(traindataloader, batch_size=args.BATCH_SIZE, shuffle=True, num_workers=4)
    evalloader = torch.utils.data.DataLoader(evaldataloader, batch_size=args.BATCH_SIZE, shuffle=False, num_workers=4)

    ''' optimization '''
    criterion_mse = torch.nn.MSELoss(reduction='none')
    params = list(predictor.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.LEARNING_RATE)

    ''' training loop '''
    best_val_1 = {"avg_wayscore": 0.0, "log_string": ''}
    for epoch in range(args.EPOCH):  # loop over the dataset multiple times
        sum_loss = 0.0

        rgb_encoder.eval()
        depth_encoder.eval()
        predictor.train()

        for i, data in enumerate(trainloader):
            scan_ids = data['scan_id']
            waypoint_ids = data['waypoint_id']
            rgb_imgs = data['rgb'].to(device)
            depth_imgs = data['depth'].to(device)

            ''' processing observations '''
            rgb_feats = rgb_encoder(rgb_imgs)        # (BATCH_SIZE*ANGLES, 2048)
            depth_feats = depth_encoder(depth_imgs)  # (BATCH_SIZE*ANGLES, 128, 4, 4)

            ''' learning objectives '''
            target, obstacle, weight, _, _ = utils.get_gt_nav_map(
                args.ANGLES, navigability_dict, scan_ids, waypoint_ids)
            target = target.to(device)
            weight = weight.to(device)

            vis_logits = TRM_predict('train', args, predictor, rgb_feats, depth_feats)
            loss_vis = criterion_mse(vis_logits, target)
            if args.WEIGHT:
                loss_vis = loss_vis * weight
            total_loss = loss_vis.sum() / vis_logits.size(0) / args.ANGLES

            total_loss.backward()
            optimizer.step()
            sum_loss += total_loss.item()

            print_progress(i + 1, len(trainloader), prefix='Epoch: %d/%d' % ((epoch + 1), args.EPOCH))
        writer.add_scalar("Train/Loss", sum_loss / (i + 1), epoch)

        ''' evaluation - inference '''
        sum_loss = 0.0
        predictions = {'sample_id': [], 'source_pos': [], 'target_pos': [], 'probs': [], 'logits': [],
                       'target': [], 'obstacle': [], 'sample_loss': []}

        rgb_encoder.eval()
        depth_encoder.eval()
        predictor.eval()

        for i, data in enumerate(evalloader):
            scan_ids = data['scan_id']
            waypoint_ids = data['waypoint_id']
            sample_id = data['sample_id']
            rgb_imgs = data['rgb'].to(device)
            depth_imgs = data['depth'].to(device)

            target, obstacle, weight, source_pos, target_pos = utils.get_gt_nav_map(
                args.ANGLES, navigability_dict, scan_ids, waypoint_ids)
            target = target.to(device)
            obstacle = obstacle.to(device)
            weight = weight.to(device)

            rgb_feats = rgb_encoder(rgb_imgs)
            depth_feats = depth_encoder(depth_imgs)

            vis_probs, vis_logits = TRM_predict('eval', args, predictor, rgb_feats, depth_feats)
            loss_vis = criterion_mse(vis_logits, target)
            if args.WEIGHT:
                loss_vis = loss_vis * weight
            total_loss = loss_vis.sum() / vis_logits.size(0) / args.ANGLES

            sum_loss += total_loss.item()
            predictions['sample_id'].append(sample_id)
            predictions['source_pos'].append(source_pos)
            predictions['target_pos'].append(target_pos)
            predictions['probs'].append(vis_probs.tolist())
            predictions['logits'].append(vis_logits.tolist())
            predictions['target'].append(target.tolist())
            predictions['obstacle'].append(obstacle.tolist())

        print('Eval Loss: %.5f' % (sum_loss / (i + 1)))
        results = waypoint_eval(args, predictions)
        writer.add_scalar("Evaluation/avg_wayscore", results['avg_wayscore'], epoch)

        if results['avg_wayscore'] > best_val_1['avg_wayscore']:
            checkpoint_save_path = './checkpoints/%s/snap/check_val_best_avg_wayscore' % (args.EXP_ID)
            utils.save_checkpoint(epoch + 1, predictor, optimizer, checkpoint_save_path)
            best_val_1['avg_wayscore'] = results['avg_wayscore']


if __name__ == "__main__":
    param = Param()
    args = param.args
    setup(args)
    predict_waypoints(args)
