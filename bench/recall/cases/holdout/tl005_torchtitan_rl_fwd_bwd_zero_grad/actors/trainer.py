"""Policy trainer actor: the controller calls fwd_bwd once per micro-batch, then optim_step."""
import torch
import torch.nn.functional as F


class PolicyTrainer:
    def __init__(self, model, config, device):
        self.device = device
        self.config = config
        self.model = model.to(device)
        self.model.train()
        self.model_parts = [self.model]
        self.optimizers = torch.optim.AdamW(self.model.parameters(), lr=config.lr,
                                            weight_decay=config.weight_decay)
        self.lr_schedulers = torch.optim.lr_scheduler.LambdaLR(
            self.optimizers, lambda step: min(1.0, (step + 1) / config.warmup_steps))
        self.step = 0

    def _grpo_loss(self, logits, batch):
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        token_logprobs = logprobs.gather(-1, batch["response_ids"].unsqueeze(-1)).squeeze(-1)
        ratio = torch.exp(token_logprobs - batch["old_logprobs"])
        clipped = torch.clamp(ratio, 1 - self.config.clip_eps, 1 + self.config.clip_eps)
        advantages = batch["advantages"].unsqueeze(-1)
        per_token = -torch.minimum(ratio * advantages, clipped * advantages)
        mask = batch["response_mask"]
        return (per_token * mask).sum() / mask.sum().clamp(min=1)

    def fwd_bwd(self, batch, num_microbatches):
        """Forward and backward on one micro-batch; gradients are meant to accumulate."""
        self.optimizers.zero_grad()
        batch = {k: v.to(self.device) for k, v in batch.items()}
        logits = self.model(batch["input_ids"])
        loss = self._grpo_loss(logits, batch) / num_microbatches
        loss.backward()
        return {"loss": loss.item() * num_microbatches}

    def optim_step(self):
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_norm)
        self.optimizers.step()
        self.lr_schedulers.step()
        self.step += 1
        return {"grad_norm": grad_norm.item(), "lr": self.lr_schedulers.get_last_lr()[0]}
