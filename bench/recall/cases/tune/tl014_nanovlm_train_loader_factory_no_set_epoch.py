import contextlib
import math
import random

import numpy
import torch
import torch.distributed as dist
import torch.optim as optim
from datasets import concatenate_datasets, load_dataset
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

import models.config as config
from data.collators import VQACollator
from data.datasets import VQADataset
from data.processors import get_image_processor, get_tokenizer
from models.vision_language_model import VisionLanguageModel


def init_dist():
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(dist.get_rank())


def is_dist():
    return dist.is_available() and dist.is_initialized()


def is_master():
    return dist.get_rank() == 0 if is_dist() else True


def get_world_size():
    return dist.get_world_size() if is_dist() else 1


def get_rank():
    return dist.get_rank() if is_dist() else 0


def wrap_model(model):
    return DistributedDataParallel(model, device_ids=[dist.get_rank()])


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    numpy.random.seed(worker_seed)
    random.seed(worker_seed)


def get_dataloaders(train_cfg, vlm_cfg):
    image_processor = get_image_processor(vlm_cfg.vit_img_size)
    tokenizer = get_tokenizer(vlm_cfg.lm_tokenizer, vlm_cfg.vlm_extra_tokens, vlm_cfg.lm_chat_template)

    combined_train_data = []
    for dataset_name in train_cfg.train_dataset_name:
        train_ds = load_dataset(train_cfg.train_dataset_path, dataset_name)
        combined_train_data.append(train_ds["train"])
    train_ds = concatenate_datasets(combined_train_data).shuffle(seed=0)

    total_samples = min(len(train_ds), train_cfg.data_cutoff_idx or len(train_ds))
    val_size = int(total_samples * train_cfg.val_ratio)
    train_size = total_samples - val_size

    train_dataset = VQADataset(train_ds.select(range(train_size)), tokenizer, image_processor,
                               vlm_cfg.mp_image_token_length)
    val_dataset = VQADataset(train_ds.select(range(train_size, total_samples)), tokenizer,
                             image_processor, vlm_cfg.mp_image_token_length)
    vqa_collator = VQACollator(tokenizer, vlm_cfg.lm_max_length)

    g = torch.Generator()
    g.manual_seed(0)

    train_loader = DataLoader(
        train_dataset,
        batch_size=train_cfg.batch_size,
        sampler=DistributedSampler(train_dataset, rank=get_rank(), num_replicas=get_world_size()),
        collate_fn=vqa_collator,
        num_workers=8,
        pin_memory=True,
        drop_last=True,
        worker_init_fn=seed_worker,
        generator=g,
    )
    val_loader = DataLoader(
        val_dataset,
        batch_size=train_cfg.batch_size,
        sampler=DistributedSampler(val_dataset, rank=get_rank(), num_replicas=get_world_size(), shuffle=False),
        collate_fn=vqa_collator,
        num_workers=8,
        pin_memory=True,
        drop_last=True,
        worker_init_fn=seed_worker,
        generator=g,
    )
    return train_loader, val_loader


def get_lr(it, max_lr, max_steps):
    min_lr = max_lr * 0.1
    warmup_steps = max_steps * 0.03
    if it < warmup_steps:
        return max_lr * (it + 1) / warmup_steps
    if it > max_steps:
        return min_lr
    decay_ratio = (it - warmup_steps) / (max_steps - warmup_steps)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (max_lr - min_lr)


def train(train_cfg, vlm_cfg):
    train_loader, val_loader = get_dataloaders(train_cfg, vlm_cfg)

    model = VisionLanguageModel(vlm_cfg, load_backbone=vlm_cfg.vlm_load_backbone_weights)
    param_groups = [{"params": list(model.MP.parameters()), "lr": train_cfg.lr_mp},
                    {"params": list(model.decoder.parameters()) + list(model.vision_encoder.parameters()),
                     "lr": train_cfg.lr_backbones}]
    optimizer = optim.AdamW(param_groups)

    device = torch.device("cuda")
    model.to(device)
    if is_dist():
        model = wrap_model(model)

    global_step = 0
    epoch = 0
    while global_step < train_cfg.max_training_steps:
        epoch += 1
        model.train()
        total_train_loss = 0
        optimizer.zero_grad()

        for i, batch in enumerate(train_loader):
            is_update_step = (i + 1) % train_cfg.gradient_accumulation_steps == 0 or i + 1 == len(train_loader)
            images = batch["images"].to(device)
            input_ids = batch["input_ids"].to(device)
            labels = batch["labels"].to(device)
            attention_mask = batch["attention_mask"].to(device)

            # Skip the gradient all-reduce on accumulation steps
            context = model.no_sync() if is_dist() and not is_update_step else contextlib.nullcontext()
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                with context:
                    _, loss = model(input_ids, images, attention_mask=attention_mask, targets=labels)

            if train_cfg.gradient_accumulation_steps > 1:
                loss = loss / train_cfg.gradient_accumulation_steps
            loss.backward()

            if is_update_step:
                if train_cfg.max_grad_norm is not None:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=train_cfg.max_grad_norm)
                optimizer.param_groups[0]["lr"] = get_lr(global_step, train_cfg.lr_mp, train_cfg.max_training_steps)
                optimizer.param_groups[1]["lr"] = get_lr(global_step, train_cfg.lr_backbones, train_cfg.max_training_steps)
                optimizer.step()
                optimizer.zero_grad()
                global_step += 1

            total_train_loss += loss.item() * train_cfg.gradient_accumulation_steps
            if global_step >= train_cfg.max_training_steps:
                break

        if is_master():
            print(f"Epoch {epoch}: train loss {total_train_loss / len(train_loader):.4f}")


def main():
    vlm_cfg = config.VLMConfig()
    train_cfg = config.TrainConfig()
    init_dist()
    train(train_cfg, vlm_cfg)
    if is_dist():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
