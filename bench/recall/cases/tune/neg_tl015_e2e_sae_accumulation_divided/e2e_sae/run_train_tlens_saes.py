"""Train SAEs on the activations of a TransformerLens model (trimmed to the training loop)."""
from typing import Any

import torch
import tqdm
from torch.utils.data import DataLoader

from e2e_sae.data import create_data_loader
from e2e_sae.losses import calc_loss
from e2e_sae.models.transformers import SAETransformer


def get_lr_schedule(warmup_samples, cooldown_samples, n_samples, effective_batch_size):
    warmup_steps = warmup_samples // effective_batch_size
    cooldown_steps = cooldown_samples // effective_batch_size
    total_steps = n_samples // effective_batch_size

    def lr_schedule(step):
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        if step > total_steps - cooldown_steps:
            return max(0.0, (total_steps - step) / max(cooldown_steps, 1))
        return 1.0

    return lr_schedule


def train(config: dict[str, Any], model: SAETransformer, train_loader: DataLoader, device: torch.device) -> None:
    model.saes.train()

    effective_batch_size = config["batch_size"] * config["gradient_accumulation_steps"]
    optimizer = torch.optim.Adam(model.saes.parameters(), lr=config["lr"])
    lr_schedule = get_lr_schedule(config["warmup_samples"], config["cooldown_samples"],
                                  config["n_samples"], effective_batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lr_schedule)

    n_batches = config["n_samples"] // config["batch_size"]
    total_samples = 0
    grad_updates = 0
    for batch_idx, batch in tqdm.tqdm(enumerate(train_loader), total=n_batches, desc="Steps"):
        tokens: torch.Tensor = batch[config["column_name"]].to(device=device)
        total_samples += tokens.shape[0]

        # Run the model with the SAEs spliced in, caching the original activations too
        orig_logits, orig_acts = model.forward_raw(tokens, run_entire_model=True, final_layer=None)
        new_logits, new_acts = model.forward(tokens, sae_positions=model.raw_sae_positions)

        loss, loss_dict = calc_loss(
            orig_logits=orig_logits,
            new_logits=new_logits,
            orig_acts=orig_acts,
            sae_acts=new_acts,
            loss_configs=config["loss"],
        )

        loss = loss / config["gradient_accumulation_steps"]
        loss.backward()

        is_grad_step = (batch_idx + 1) % config["gradient_accumulation_steps"] == 0
        if is_grad_step:
            if config.get("max_grad_norm") is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), config["max_grad_norm"])
            grad_updates += 1
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()

        if batch_idx % config.get("log_every_n_grad_steps", 20) == 0:
            tqdm.tqdm.write(f"Samples {total_samples} Batch_idx ({batch_idx}) Loss {loss.item()}")

        if total_samples >= config["n_samples"]:
            break


def main(config: dict[str, Any]) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SAETransformer.from_config(config).to(device)
    train_loader = create_data_loader(config["train_data"], batch_size=config["batch_size"])
    train(config, model, train_loader, device)
