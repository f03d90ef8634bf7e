import argparse
import json
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader

import util.misc as utils
from datasets import build_dataset
from engine import evaluate, train_one_epoch
from models import build_dab_detr


def get_args_parser():
    parser = argparse.ArgumentParser('DAB-DETR', add_help=False)
    parser.add_argument('--lr', default=1e-4, type=float)
    parser.add_argument('--lr_backbone', default=1e-5, type=float)
    parser.add_argument('--batch_size', default=2, type=int)
    parser.add_argument('--weight_decay', default=1e-4, type=float)
    parser.add_argument('--epochs', default=50, type=int)
    parser.add_argument('--lr_drop', default=40, type=int)
    parser.add_argument('--clip_max_norm', default=0.1, type=float)
    parser.add_argument('--amp', action='store_true', help="Train with mixed precision")
    parser.add_argument('--use_dn', action='store_true')
    parser.add_argument('--num_workers', default=10, type=int)
    parser.add_argument('--output_dir', default='')
    parser.add_argument('--device', default='cuda')
    return parser


def main(args):
    device = torch.device(args.device)

    model, criterion, postprocessors = build_dab_detr(args)
    model.to(device)

    param_dicts = [
        {"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]},
        {"params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad],
         "lr": args.lr_backbone},
    ]
    optimizer = torch.optim.AdamW(param_dicts, lr=args.lr, weight_decay=args.weight_decay)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, args.lr_drop)

    dataset_train = build_dataset(image_set='train', args=args)
    dataset_val = build_dataset(image_set='val', args=args)
    sampler_train = torch.utils.data.RandomSampler(dataset_train)
    batch_sampler_train = torch.utils.data.BatchSampler(sampler_train, args.batch_size, drop_last=True)
    data_loader_train = DataLoader(dataset_train, batch_sampler=batch_sampler_train,
                                   collate_fn=utils.collate_fn, num_workers=args.num_workers)
    data_loader_val = DataLoader(dataset_val, 1, sampler=torch.utils.data.SequentialSampler(dataset_val),
                                 drop_last=False, collate_fn=utils.collate_fn, num_workers=args.num_workers)

    output_dir = Path(args.output_dir)
    print("Start training")
    start_time = time.time()
    for epoch in range(args.epochs):
        train_stats = train_one_epoch(
            model, criterion, data_loader_train, optimizer, device, epoch,
            args.clip_max_norm, lr_scheduler=lr_scheduler, args=args)
        lr_scheduler.step()
        test_stats, _ = evaluate(model, criterion, postprocessors, data_loader_val, device, args=args)
        log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                     **{f'test_{k}': v for k, v in test_stats.items()}, 'epoch': epoch}
        if args.output_dir and utils.is_main_process():
            with (output_dir / "log.txt").open("a") as f:
                f.write(json.dumps(log_stats) + "\n")
    print('Training time {:.0f}s'.format(time.time() - start_time))


if __name__ == '__main__':
    parser = argparse.ArgumentParser('DAB-DETR training script', parents=[get_args_parser()])
    main(parser.parse_args())
