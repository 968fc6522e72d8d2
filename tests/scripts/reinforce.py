"""REINFORCE on a corridor: walk right to the goal. A policy network, torch.distributions.
Categorical (sample, log_prob, entropy), discounted returns normalised with std, Adam.

Sampling draws from the library's own generator, so the training trajectories differ between
implementations; what is printed is deterministic (the initial policy's distribution) or the
learned greedy behaviour, which both must reach."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

LENGTH, MAX_STEPS, GAMMA = 6, 20, 0.95


def features(pos):
    x = torch.zeros(LENGTH + 1)
    x[pos] = 1.0
    x[-1] = pos / LENGTH
    return x


def env_step(pos, action):
    pos = max(0, pos + (1 if action == 1 else -1))
    done = pos == LENGTH - 1
    return pos, (1.0 if done else -0.01), done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(LENGTH + 1, 32)
        self.affine2 = nn.Linear(32, 2)
        self.saved_log_probs, self.rewards = [], []

    def forward(self, x):
        return F.softmax(self.affine2(F.relu(self.affine1(x))), dim=-1)


torch.manual_seed(0)
policy = Policy()
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in policy.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32)))
optimizer = torch.optim.Adam(policy.parameters(), lr=2e-2)
eps = np.finfo(np.float32).eps.item()

probs = policy(torch.stack([features(p) for p in range(LENGTH)]))
dist = Categorical(probs)
print("initial probs", [round(v, 5) for v in probs[:, 1].tolist()])
print("log_prob(right)", [round(v, 5) for v in dist.log_prob(torch.ones(LENGTH)).tolist()])
print("entropy", [round(v, 5) for v in dist.entropy().tolist()])
logits_dist = Categorical(logits=torch.log(probs))
gap = logits_dist.log_prob(torch.zeros(LENGTH)) - dist.log_prob(torch.zeros(LENGTH))
print("same log_prob from logits", bool(gap.abs().max() < 1e-6))
sample = dist.sample()
print("sample", tuple(sample.shape), sample.dtype, bool(((sample == 0) | (sample == 1)).all()))


def finish_episode():
    returns, R = [], 0.0
    for r in policy.rewards[::-1]:
        R = r + GAMMA * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    if len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + eps)
    loss = torch.cat([-lp * R for lp, R in zip(policy.saved_log_probs, returns)]).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    del policy.rewards[:], policy.saved_log_probs[:]


running = 0.0
for episode in range(150):
    pos, ep_reward = 0, 0.0
    for t in range(MAX_STEPS):
        m = Categorical(policy(features(pos).unsqueeze(0)))
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        pos, reward, done = env_step(pos, action.item())
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    running = 0.05 * ep_reward + 0.95 * running
    finish_episode()

with torch.no_grad():
    pos, greedy_return, path = 0, 0.0, []
    for t in range(MAX_STEPS):
        action = policy(features(pos)).argmax().item()
        path.append(action)
        pos, reward, done = env_step(pos, action)
        greedy_return += reward
        if done:
            break
print("greedy actions", path, "return", round(greedy_return, 4))
print("learned", running > 0.5)
