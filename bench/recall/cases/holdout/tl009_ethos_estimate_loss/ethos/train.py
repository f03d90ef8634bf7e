import math
import time
from contextlib import nullcontext

import torch

from ethos.datasets import TimelineDataset
from ethos.model import GPT2LMNoBiasModel

batch_size = 32
block_size = 2048
max_iters = 100_000
eval_interval = 1000
eval_iters = 50
learning_rate = 6e-4
min_lr = 6e-5
warmup_iters = 2000
lr_decay_iters = 50_000
grad_clip = 1.0
dropout = 0.3
device = "cuda"
dtype = "bfloat16"


@torch.no_grad()
def estimate_loss(model, ctx, datasets):
    out = {}
    for split, dataset in datasets.items():
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = dataset.get_batch(batch_size, device)
            with ctx:
                _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def main(data_dir, vocab_size):
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    ctx = nullcontext() if device == "cpu" else torch.autocast(device_type="cuda", dtype=ptdtype)

    datasets = {"train": TimelineDataset(f"{data_dir}/train.npy", block_size),
                "val": TimelineDataset(f"{data_dir}/val.npy", block_size)}
    model = GPT2LMNoBiasModel(vocab_size, block_size, dropout=dropout).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95), weight_decay=0.1)

    best_val_loss = 1e9
    X, Y = datasets["train"].get_batch(batch_size, device)
    t0 = time.time()
    for iter_num in range(max_iters):
        lr = get_lr(iter_num)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr

        if iter_num % eval_interval == 0:
            losses = estimate_loss(model, ctx, datasets)
            print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if losses["val"] < best_val_loss:
                best_val_loss = losses["val"]
                torch.save({"model": model.state_dict(), "iter_num": iter_num}, "best_model.pt")

        with ctx:
            _, loss = model(X, Y)
        X, Y = datasets["train"].get_batch(batch_size, device)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

        if iter_num % 100 == 0:
            print(f"iter {iter_num}: loss {loss.item():.4f}, time {(time.time() - t0) * 1000:.0f}ms")
            t0 = time.time()
