##############################################################################
# train_cifar_multigpu.py: energy matching on CIFAR-10 with one process per GPU
# (trimmed: contrastive-divergence term, FID evaluation and checkpoints dropped)
##############################################################################
import copy
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

from network_transformer_vit import EBViTModelWrapper
from torchcfm.conditional_flow_matching import ExactOptimalTransportConditionalFlowMatcher
from utils_train import ema, flow_weight, infiniteloop, warmup_lr

BATCH_SIZE = 128
NUM_WORKERS = 4
LR = 1.2e-3
TOTAL_STEPS = 400_000
GRAD_CLIP = 1.0
EMA_DECAY = 0.9999
TIME_CUTOFF = 1.0


def forward_flow(model, flow_matcher, x_real_flow):
    x0_flow = torch.randn_like(x_real_flow)
    t, xt, ut = flow_matcher.sample_location_and_conditional_flow(x0_flow, x_real_flow)
    vt = model(t, xt)
    flow_mse = (vt - ut).square()
    w_flow = flow_weight(t, cutoff=TIME_CUTOFF)
    return torch.mean(w_flow * flow_mse.mean(dim=[1, 2, 3]))


def train_loop(rank, world_size):
    # Set the CUDA device first so that NCCL binds this process to its own GPU
    torch.cuda.set_device(rank)
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)
    device = torch.device(f"cuda:{rank}")

    dataset = datasets.CIFAR10(
        root="./data",
        train=True,
        download=(rank == 0),
        transform=transforms.Compose([
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
        ])
    )
    dist.barrier()  # ensure download is done
    train_sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    dataloader = torch.utils.data.DataLoader(
        dataset,
        batch_size=BATCH_SIZE,
        num_workers=NUM_WORKERS,
        sampler=train_sampler,
        drop_last=True,
        pin_memory=True
    )
    datalooper = infiniteloop(dataloader)

    net_model = EBViTModelWrapper(dim=(3, 32, 32), num_channels=128, num_res_blocks=2, dropout=0.1,
                                  patch_size=4, embed_dim=384, transformer_nheads=4,
                                  transformer_nlayers=8).to(device)
    net_model = DDP(net_model, device_ids=[rank], output_device=rank, find_unused_parameters=False)
    ema_model = copy.deepcopy(net_model.module).to(device)

    optim = torch.optim.Adam(net_model.parameters(), lr=LR, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lr_lambda=warmup_lr)
    flow_matcher = ExactOptimalTransportConditionalFlowMatcher(sigma=0.0)

    for step in range(TOTAL_STEPS + 1):
        train_sampler.set_epoch(step)  # shuffle each epoch in distributed

        optim.zero_grad()
        x_real_flow = next(datalooper).to(device)
        loss = forward_flow(net_model, flow_matcher, x_real_flow)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net_model.parameters(), GRAD_CLIP)
        optim.step()
        sched.step()
        ema(net_model.module, ema_model, EMA_DECAY)

        if rank == 0 and step % 100 == 0:
            print(f"[Step {step}] flow={loss.item():.5f} LR={sched.get_last_lr()[0]:.6f}")

    dist.destroy_process_group()


def main():
    world_size = int(os.environ.get("WORLD_SIZE", torch.cuda.device_count()))
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    mp.spawn(train_loop, args=(world_size,), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
