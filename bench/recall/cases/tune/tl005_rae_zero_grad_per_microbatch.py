import torch
import torch.nn.functional as F


def train(model, loader, optimizer, scheduler, args, device):
    model.train()
    accum = args.grad_accum_steps
    for step, batch in enumerate(loader):
        images = batch["image"].to(device, non_blocking=True)
        micro_batches = images.chunk(accum)
        for micro in micro_batches:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                recon = model(micro)
                loss = F.mse_loss(recon, micro) / accum
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        optimizer.step()
        scheduler.step()
        if step % args.log_every == 0:
            print(f"step {step}: loss {loss.item() * accum:.4f}")
