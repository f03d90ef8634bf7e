import torch
import torch.nn as nn

from alf.utils import common


class RLAlgorithm(nn.Module):
    """An on-policy RL algorithm trained from the experience it collects."""

    def __init__(self, env, actor_network, value_network, optimizer_ctor, unroll_length=8):
        super().__init__()
        self._env = env
        self._actor_network = actor_network
        self._value_network = value_network
        self._unroll_length = unroll_length
        self._device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.to(self._device)
        self._optimizer = optimizer_ctor(self.parameters())

    def unroll(self):
        observations, rewards, log_probs, values = [], [], [], []
        obs = self._env.current_observation().to(self._device)
        for _ in range(self._unroll_length):
            dist = self._actor_network(obs)
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            values.append(self._value_network(obs).squeeze(-1))
            obs, reward = self._env.step(action.cpu())
            obs = obs.to(self._device)
            rewards.append(reward.to(self._device))
        return torch.stack(rewards), torch.stack(log_probs), torch.stack(values)

    def update(self, rewards, log_probs, values):
        returns = torch.flip(torch.cumsum(torch.flip(rewards, [0]), 0), [0])
        advantages = returns - values.detach()
        loss = -(advantages * log_probs).mean() + 0.5 * (returns - values).pow(2).mean()
        self._optimizer.zero_grad()
        loss.backward()
        self._optimizer.step()
        return loss

    def train_iter(self):
        with common.record_time("time/unroll"):
            rewards, log_probs, values = self.unroll()
        with common.record_time("time/train"):
            loss = self.update(rewards, log_probs, values)
        return loss


def train(algorithm, num_iterations):
    for _ in range(num_iterations):
        algorithm.train_iter()
