"""GRPO controller: generate, score, then train the policy on the rollouts in micro-batches."""
import torch

from actors.trainer import PolicyTrainer


def split_microbatches(batch, num_microbatches):
    size = next(iter(batch.values())).shape[0] // num_microbatches
    return [{k: v[i * size:(i + 1) * size] for k, v in batch.items()} for i in range(num_microbatches)]


def train(model, generator, reward_fn, prompts_loader, config):
    trainer = PolicyTrainer(model, config, torch.device("cuda"))
    for step, prompts in enumerate(prompts_loader):
        rollouts = generator.generate(prompts, num_samples=config.group_size)
        rewards = reward_fn(rollouts)
        grouped = rewards.view(-1, config.group_size)
        advantages = (grouped - grouped.mean(-1, keepdim=True)) / (grouped.std(-1, keepdim=True) + 1e-6)
        rollouts["advantages"] = advantages.flatten()

        losses = []
        for microbatch in split_microbatches(rollouts, config.num_microbatches):
            losses.append(trainer.fwd_bwd(microbatch, config.num_microbatches)["loss"])
        stats = trainer.optim_step()
        print(f"step {step}: loss {sum(losses) / len(losses):.4f} grad_norm {stats['grad_norm']:.3f}")
        generator.update_weights(trainer.model.state_dict())
