import argparse
import os

import torch
from attrdict import AttrDict

from sgan.data.loader import data_loader
from sgan.models import TrajectoryGenerator

parser = argparse.ArgumentParser()
parser.add_argument('--model_path', type=str)
parser.add_argument('--num_samples', default=20, type=int)
parser.add_argument('--dset_type', default='test', type=str)
parser.add_argument('--device', default='cpu', type=str)


def get_generator(checkpoint, device):
    args = AttrDict(checkpoint['args'])
    generator = TrajectoryGenerator(
        obs_len=args.obs_len,
        pred_len=args.pred_len,
        embedding_dim=args.embedding_dim,
        encoder_h_dim=args.encoder_h_dim_g,
        decoder_h_dim=args.decoder_h_dim_g,
        mlp_dim=args.mlp_dim,
        num_layers=args.num_layers,
        dropout=args.dropout)
    generator.load_state_dict(checkpoint['g_state'])
    generator.to(device)
    generator.train()
    return generator


def displacement_error(pred_traj, pred_traj_gt):
    loss = pred_traj_gt.permute(1, 0, 2) - pred_traj.permute(1, 0, 2)
    return torch.sqrt((loss ** 2).sum(dim=2)).sum(dim=1)


def evaluate(args, loader, generator, num_samples, device):
    ade_outer = []
    total_traj = 0
    with torch.no_grad():
        for batch in loader:
            batch = [tensor.to(device) for tensor in batch]
            (obs_traj, pred_traj_gt, obs_traj_rel, pred_traj_gt_rel,
             non_linear_ped, loss_mask, seq_start_end) = batch

            ade = []
            total_traj += pred_traj_gt.size(1)

            for _ in range(num_samples):
                pred_traj_fake_rel = generator(obs_traj, obs_traj_rel, seq_start_end)
                pred_traj_fake = torch.cumsum(pred_traj_fake_rel, dim=0) + obs_traj[-1]
                ade.append(displacement_error(pred_traj_fake, pred_traj_gt))
            ade_outer.append(torch.stack(ade, 1).min(1)[0].sum())
    return sum(ade_outer) / (total_traj * args.pred_len)


def main(args):
    device = torch.device(args.device)
    checkpoint = torch.load(args.model_path, map_location=device)
    generator = get_generator(checkpoint, device)
    _args = AttrDict(checkpoint['args'])
    path = os.path.join(_args.dataset_name, args.dset_type)
    _, loader = data_loader(_args, path)
    ade = evaluate(_args, loader, generator, args.num_samples, device)
    print('Dataset: {}, Pred Len: {}, ADE: {:.2f}'.format(_args.dataset_name, _args.pred_len, ade))


if __name__ == '__main__':
    main(parser.parse_args())
