import argparse
import os

import torch
import torch.distributed as dist

from ssd.config import cfg
from ssd.data.build import make_data_loader
from ssd.engine.trainer import do_train
from ssd.modeling.detector import build_detection_model
from ssd.solver.build import make_lr_scheduler, make_optimizer
from ssd.utils.checkpoint import CheckPointer


def train(cfg, args):
    model = build_detection_model(cfg)
    device = torch.device(cfg.MODEL.DEVICE)
    model.to(device)
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)

    lr = cfg.SOLVER.LR * args.num_gpus  # scale by num gpus
    optimizer = make_optimizer(cfg, model, lr)

    milestones = [step // args.num_gpus for step in cfg.SOLVER.LR_STEPS]
    scheduler = make_lr_scheduler(cfg, optimizer, milestones)

    arguments = {"iteration": 0}
    checkpointer = CheckPointer(model, optimizer, scheduler, cfg.OUTPUT_DIR, dist.get_rank() == 0 if args.distributed else True)
    extra_checkpoint_data = checkpointer.load()
    arguments.update(extra_checkpoint_data)

    max_iter = cfg.SOLVER.MAX_ITER // args.num_gpus
    train_loader = make_data_loader(cfg, is_train=True, distributed=args.distributed, max_iter=max_iter,
                                    start_iter=arguments["iteration"])

    return do_train(cfg, model, train_loader, optimizer, scheduler, checkpointer, device, arguments, args)


def main():
    parser = argparse.ArgumentParser(description="Single Shot MultiBox Detector Training With PyTorch")
    parser.add_argument("--config-file", default="configs/vgg_ssd300_voc0712.yaml", type=str)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--log_step", default=10, type=int)
    parser.add_argument("--save_step", default=2500, type=int)
    parser.add_argument("--eval_step", default=2500, type=int)
    args = parser.parse_args()

    num_gpus = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    args.distributed = num_gpus > 1
    args.num_gpus = num_gpus
    if torch.cuda.is_available():
        torch.backends.cudnn.benchmark = True
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")

    cfg.merge_from_file(args.config_file)
    cfg.freeze()
    train(cfg, args)


if __name__ == "__main__":
    main()
