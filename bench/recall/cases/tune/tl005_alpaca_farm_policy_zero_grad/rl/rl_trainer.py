import abc
from typing import Dict, Tuple

import torch
import tqdm
from accelerate.optimizer import AcceleratedOptimizer
from torch.utils.data import DataLoader, TensorDataset

from .. import common

FIRST_STEP_IDX = 1


class RLTrainer(object):
    def __init__(self, args, train_dataset, eval_dataset, data_collator, policy, ref_policy, reward_model,
                 tokenizer, accelerator, optimizer=None, lr_scheduler=None):
        super(RLTrainer, self).__init__()
        self.args = args
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.data_collator = data_collator
        self.policy = policy
        self.ref_policy = ref_policy
        self.reward_model = reward_model
        self.tokenizer = tokenizer
        self.optimizer = optimizer
        self.accelerator = accelerator
        self.lr_scheduler = lr_scheduler
        self.log_history = []

    @abc.abstractmethod
    @torch.inference_mode()
    def rollout(self, queries_data) -> Dict[str, torch.Tensor]:
        raise NotImplementedError

    @abc.abstractmethod
    def compute_loss(self, rollouts: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, Dict]:
        raise NotImplementedError

    @property
    def optimizable_params(self):
        return [p for p in self.policy.parameters() if p.requires_grad and p.grad is not None]

    @torch.inference_mode()
    def _compute_grad_norm(self):
        return torch.stack([p.grad.norm(2) for p in self.optimizable_params]).norm(2)

    def step_with_rollouts(self, rollouts):
        """Based on fixed rollouts, run PPO for multiple epochs."""
        assert isinstance(self.optimizer, AcceleratedOptimizer), (
            "`optimizer` must be pushed through `accelerator.prepare`. "
            "Otherwise the `accelerator.accumulate` context manager won't correctly disable `zero_grad` or `step`."
        )
        rollouts_dataloader = self.get_rollouts_dataloader(rollouts=rollouts)
        stats_list = []
        for epoch_idx in range(self.args.noptepochs):
            for batch_idx, rollouts_batch in tqdm.tqdm(enumerate(rollouts_dataloader, 1), desc="gradstep"):
                with self.accelerator.accumulate(self.policy):
                    ppo_loss, stats_for_this_step = self.compute_loss(rollouts_batch)
                    self.accelerator.backward(ppo_loss)
                    if self.accelerator.sync_gradients:
                        if self.args.max_grad_norm is not None:
                            self.accelerator.clip_grad_norm_(self.policy.parameters(), self.args.max_grad_norm)
                        stats_for_this_step["loss/grad_norm"] = self._compute_grad_norm()
                        stats_list.append(stats_for_this_step)
                    self.optimizer.step()
                    self.policy.zero_grad(set_to_none=True)
        return common.merge_dict(stats_list, torch.stack)

    def step(self, train_dataloader, step_idx: int):
        queries_batches = [next(train_dataloader) for _ in range(self.args.rollout_accumulation_steps)]
        rollouts = self.rollout(queries_batches)
        train_stats = self.step_with_rollouts(rollouts)
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        return train_stats

    def create_optimizer_and_scheduler(self, num_training_steps: int):
        optimizer = torch.optim.AdamW(self.policy.parameters(), lr=self.args.learning_rate, eps=1e-5)
        lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min(1.0, step / max(1, self.args.warmup_steps)))
        self.optimizer, self.lr_scheduler = self.accelerator.prepare(optimizer, lr_scheduler)
        return self.optimizer, self.lr_scheduler

    def train(self):
        """Entry point for training."""
        total_steps = len(self.train_dataset) * self.args.total_epochs // self.args.rollout_batch_size
        self.create_optimizer_and_scheduler(total_steps)
        infinite_train_dataloader = self.get_train_dataloader()
        for step_idx in tqdm.tqdm(range(FIRST_STEP_IDX, total_steps + FIRST_STEP_IDX), desc="steps"):
            if step_idx % self.args.eval_steps == 0:
                self.evaluate(step_idx)
            self.log_history.append(self.step(infinite_train_dataloader, step_idx))
        return self.log_history

    @torch.inference_mode()
    def evaluate(self, step_idx: int):
        self.policy.eval()
        unwrapped_policy = self.accelerator.unwrap_model(self.policy, keep_fp32_wrapper=True)
        outputs = unwrapped_policy.policy.base_model.generate(**self.eval_dataset.prompts,
                                                             max_new_tokens=self.args.response_len)
        return self.tokenizer.batch_decode(outputs, skip_special_tokens=True)

    def get_train_dataloader(self):
        train_dataloader = DataLoader(dataset=self.train_dataset, collate_fn=self.data_collator,
                                      batch_size=self.args.rollout_per_device_batch_size, shuffle=True,
                                      drop_last=True)
        return common.InfiniteLoader(self.accelerator.prepare(train_dataloader))

    def get_rollouts_dataloader(self, rollouts: Dict[str, torch.Tensor], shuffle=True, drop_last=True):
        keys = tuple(rollouts.keys())

        def collate_rollouts(instances):
            return {key: torch.stack([instance[idx] for instance in instances]) for idx, key in enumerate(keys)}

        rollouts_dataset = TensorDataset(*[rollouts[key] for key in keys])
        return DataLoader(dataset=rollouts_dataset, batch_size=self.args.step_per_device_batch_size,
                          collate_fn=collate_rollouts, shuffle=shuffle, drop_last=drop_last)
