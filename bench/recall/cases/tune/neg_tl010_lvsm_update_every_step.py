# Copyright (c) 2025 Haian Jin. Created for the LVSM project (ICLR 2025).
"""Training script of the Large View Synthesis Model (trimmed to one process and the step logic)."""
import importlib
import os

import torch
from easydict import EasyDict as edict
from torch.utils.data import DataLoader

from setup import init_config
from utils.training_utils import create_lr_scheduler, create_optimizer

config = init_config()
os.environ["OMP_NUM_THREADS"] = str(config.training.get("num_threads", 1))

device = torch.device("cuda")
amp_dtype_mapping = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}

# Load data
dataset_name = config.training.get("dataset_name", "data.dataset.Dataset")
module, class_name = dataset_name.rsplit(".", 1)
Dataset = importlib.import_module(module).__dict__[class_name]
dataset = Dataset(config)
dataloader = DataLoader(
    dataset,
    batch_size=config.training.batch_size_per_gpu,
    shuffle=True,
    num_workers=config.training.num_workers,
    persistent_workers=True,
    pin_memory=False,
    drop_last=True,
    prefetch_factor=config.training.prefetch_factor,
)
dataloader_iter = iter(dataloader)

total_train_steps = config.training.train_steps
grad_accum_steps = config.training.grad_accum_steps

# Set up model
module, class_name = config.model.class_name.rsplit(".", 1)
LVSM = importlib.import_module(module).__dict__[class_name]
model = LVSM(config).to(device)
optimizer, optimized_param_dict, all_param_dict = create_optimizer(
    model, config.training.weight_decay, config.training.lr, (config.training.beta1, config.training.beta2))
lr_scheduler = create_lr_scheduler(optimizer, total_train_steps, config.training.warmup,
                                   scheduler_type=config.training.get("scheduler_type", "cosine"))

enable_grad_scaler = config.training.use_amp and config.training.amp_dtype == "fp16"
scaler = torch.cuda.amp.GradScaler(enabled=enable_grad_scaler)

start_train_step = 0
cur_train_step = start_train_step
model.train()

for fwdbwd_pass_step in range(start_train_step * grad_accum_steps, total_train_steps * grad_accum_steps):
    try:
        data = next(dataloader_iter)
    except StopIteration:
        dataloader_iter = iter(dataloader)
        data = next(dataloader_iter)

    batch = {k: v.to(device) if type(v) == torch.Tensor else v for k, v in data.items()}

    with torch.autocast(
        enabled=config.training.use_amp,
        device_type="cuda",
        dtype=amp_dtype_mapping[config.training.amp_dtype],
    ):
        ret_dict = model(batch)

    update_grads = (fwdbwd_pass_step + 1) % grad_accum_steps == 0 or fwdbwd_pass_step == total_train_steps * grad_accum_steps - 1
    scaler.scale(ret_dict.loss_metrics.loss / grad_accum_steps).backward()
    cur_train_step += 1 if update_grads else 0

    skip_optimizer_step = False
    # Skip optimizer step if loss is NaN or Inf
    if torch.isnan(ret_dict.loss_metrics.loss) or torch.isinf(ret_dict.loss_metrics.loss):
        print(f"NaN or Inf loss detected, skip this iteration")
        skip_optimizer_step = True
        ret_dict.loss_metrics.loss.data = torch.zeros_like(ret_dict.loss_metrics.loss)

    total_grad_norm = None
    # Check gradient norm and update optimizer if everything is fine
    if update_grads:
        # Unscales the gradients
        scaler.unscale_(optimizer)
        # For all gradients, we safely change the NaN -> 0., inf -> 1e-6, -inf -> 1e-6.
        with torch.no_grad():
            for n, p in optimized_param_dict.items():
                if p.requires_grad and (p.grad is not None):
                    p.grad.nan_to_num_(nan=0.0, posinf=1e-3, neginf=-1e-3)

        total_grad_norm = 0.0
        if config.training.grad_clip_norm > 0:
            total_grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                             max_norm=config.training.grad_clip_norm).item()

            if total_grad_norm > config.training.grad_clip_norm * 2.0:
                print(f"WARNING: step {cur_train_step} grad norm too large {total_grad_norm} > "
                      f"{config.training.grad_clip_norm * 2.0}")

            allowed_gradnorm = config.training.grad_clip_norm * config.training.get("allowed_gradnorm_factor", 5)
            if total_grad_norm > allowed_gradnorm:
                skip_optimizer_step = True
                print(f"WARNING: step {cur_train_step} grad norm too large {total_grad_norm} > "
                      f"{allowed_gradnorm}, skipping optimizer step")

        if not skip_optimizer_step:
            scaler.step(optimizer)
        # update() must follow every unscale_(), also when the step is skipped
        scaler.update()

        optimizer.zero_grad(set_to_none=True)
        lr_scheduler.step()

    if cur_train_step % config.training.print_every == 0 and update_grads:
        print(f"[Param update step: {cur_train_step:6d}] | LR: {optimizer.param_groups[0]['lr']:.6f} | "
              f"loss: {ret_dict.loss_metrics.loss.item():.6f}")
