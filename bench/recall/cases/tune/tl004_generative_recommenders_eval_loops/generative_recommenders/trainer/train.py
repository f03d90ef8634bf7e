import logging
from collections import defaultdict

import torch
import torch.distributed as dist

from generative_recommenders.trainer.eval import eval_metrics_from_batch


def _move(seq_features, target_ids, device):
    seq_features = {k: v.to(device) for k, v in seq_features.items()}
    return seq_features, target_ids.to(device)


def eval_loop(model, eval_loader, device, rank):
    model.eval()
    eval_dict_all = defaultdict(list)
    for seq_features, target_ids in eval_loader:
        seq_features, target_ids = _move(seq_features, target_ids, device)
        eval_dict = eval_metrics_from_batch(model, seq_features, target_ids)
        for k, v in eval_dict.items():
            eval_dict_all[k].append(v)
    results = {k: torch.cat(v).mean().item() for k, v in eval_dict_all.items()}
    if rank == 0:
        logging.info("eval: %s", results)
    return results


def train_eval_loop(model, train_loader, eval_loader, optimizer, loss_fn, device, rank,
                    num_epochs, eval_interval=1000, train_sampler=None):
    step = 0
    for epoch in range(num_epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        for seq_features, target_ids in train_loader:
            seq_features, target_ids = _move(seq_features, target_ids, device)
            optimizer.zero_grad()
            user_embeddings = model(
                past_lengths=seq_features["past_lengths"],
                past_ids=seq_features["past_ids"],
                past_payloads=seq_features["past_payloads"],
            )
            loss = loss_fn(user_embeddings, target_ids)
            loss.backward()
            optimizer.step()
            step += 1

            if step % eval_interval == 0:
                model.eval()
                eval_dict_all = defaultdict(list)
                for eval_features, eval_targets in eval_loader:
                    eval_features, eval_targets = _move(eval_features, eval_targets, device)
                    eval_dict = eval_metrics_from_batch(model, eval_features, eval_targets)
                    for k, v in eval_dict.items():
                        eval_dict_all[k].append(v)
                if rank == 0:
                    logging.info("step %d: %s", step, {k: torch.cat(v).mean().item() for k, v in eval_dict_all.items()})
                model.train()
        if dist.is_initialized():
            dist.barrier()
