import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from diffusion import create_diffusion
from models import CDiT_models


def train_step(model, diffusion, opt, x, y, rel_t, bfloat_enable, device):
    t = torch.randint(0, diffusion.num_timesteps, (x.shape[0],), device=device)
    model_kwargs = dict(y=y, rel_t=rel_t)
    if bfloat_enable:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss_dict = diffusion.training_losses(model, x, t, model_kwargs)
            loss = loss_dict["loss"].mean()
        loss.backward()
        opt.step()
    else:
        opt.zero_grad()
        loss_dict = diffusion.training_losses(model, x, t, model_kwargs)
        loss = loss_dict["loss"].mean()
        loss.backward()
        opt.step()
    return loss.detach()


def main(args, loader, rank, device):
    model = CDiT_models[args.model](context_size=args.context_size).to(device)
    model = DDP(model, device_ids=[rank])
    diffusion = create_diffusion(timestep_respacing="")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0)
    train_steps = 0
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        for x, y, rel_t in loader:
            x, y, rel_t = x.to(device, non_blocking=True), y.to(device, non_blocking=True), rel_t.to(device)
            loss = train_step(model, diffusion, opt, x, y, rel_t, args.bfloat16, device)
            train_steps += 1
            if train_steps % args.log_every == 0 and rank == 0:
                print(f"(step={train_steps:07d}) Train Loss: {loss.item():.4f}")
