import torch
from torch import nn, optim

from brax import envs
from brax.envs.wrappers import torch as torch_wrapper

from agent import Agent, sd_map

env = torch_wrapper.TorchWrapper(envs.create("ant", batch_size=2048), device="cuda")
agent = Agent(policy_layers=[env.observation_space.shape[-1], 64, 64, env.action_space.shape[-1] * 2],
              value_layers=[env.observation_space.shape[-1], 64, 64, 1], entropy_cost=1e-2,
              discounting=0.97, reward_scaling=0.1, device="cuda")
optimizer = optim.Adam(agent.parameters(), lr=3e-4)

total_loss = 0
for eval_i in range(10):
    observation = env.reset()
    for _ in range(100):
        observation, td = agent.rollout(env, observation)
        td = sd_map(lambda x: x.flatten(0, 1), td)
        for _ in range(4):
            optimizer.zero_grad()
            loss = agent.loss(td)
            loss.backward()
            optimizer.step()
            total_loss += loss
    print(f"eval {eval_i}: mean loss {total_loss / ((eval_i + 1) * 400)}")
