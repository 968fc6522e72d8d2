"""Issue 11's small models, where per-op overhead is the cost: a reinforcement-learning loop and
2-layer LSTM/GRU language-model steps. Each timing runs in a fresh process, strata and PyTorch
alternating (``harness.fresh_process_medians``), both on one thread (BLAS included), as the
issue measured them.

    python -m benchmarks.small_models             # this group alone
    python -m benchmarks --filter small_models
"""

import statistics
import sys
import time

import numpy as np

from .harness import Result, fresh_process_medians

RL_STEPS = 200


def _no_mark(phase):
    pass


def _rl_episode(m):
    """A 4-128-2 policy acting for RL_STEPS steps of a small deterministic environment (one
    observation tensor, forward, Categorical sample and log_prob, ``.item()`` per step), then
    REINFORCE: backward of the summed loss and one Adam step. ``episode(mark)`` calls
    ``mark(phase)`` as each phase starts (``benchmarks.overhead --phases`` times them)."""
    nn = m.nn
    m.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 128), nn.Tanh(), nn.Linear(128, 2))
    opt = m.optim.Adam(policy.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    Categorical = m.distributions.Categorical

    def episode(mark=_no_mark):
        state = rng.standard_normal(4).astype(np.float32)
        log_probs, rewards = [], []
        for _ in range(RL_STEPS):
            mark("observation")
            obs = m.tensor(state).unsqueeze(0)
            mark("policy forward")
            logits = policy(obs)
            mark("Categorical(logits=...)")
            dist = Categorical(logits=logits)
            mark("sample")
            action = dist.sample()
            mark("log_prob")
            log_probs.append(dist.log_prob(action))
            mark("item and environment")
            push = 1.0 if action.item() == 1 else -1.0
            state = (0.9 * state + 0.1 * push).astype(np.float32)
            rewards.append(1.0 - abs(float(state[0])))
        mark("loss")
        returns = m.tensor(np.cumsum(rewards[::-1])[::-1].copy(), dtype=m.float32)
        loss = -(m.cat(log_probs) * returns).sum()
        opt.zero_grad()
        mark("backward")
        loss.backward()
        mark("Adam step")
        opt.step()
        mark(None)
    return episode


def _recurrent(kind, hidden):
    def build(m):
        """A 2-layer ``kind`` over 35 steps of a batch of 20: forward and backward."""
        m.manual_seed(0)
        model = getattr(m.nn, kind)(hidden, hidden, num_layers=2)
        x = m.tensor(np.random.default_rng(0).standard_normal((35, 20, hidden),
                                                              dtype=np.float32))

        def step():
            out, _ = model(x)
            model.zero_grad()
            out.sum().backward()
        return step
    return build


WORKLOADS = {
    f"RL loop: 4-128-2 policy, {RL_STEPS} steps + Categorical, backward, Adam":
        (_rl_episode, 1.3),
    "nn.LSTM 2 layers, hidden 128, seq 35, batch 20: forward+backward":
        (_recurrent("LSTM", 128), 2.0),
    "nn.GRU 2 layers, hidden 128, seq 35, batch 20: forward+backward":
        (_recurrent("GRU", 128), 2.0),
    "nn.LSTM 2 layers, hidden 256, seq 35, batch 20: forward+backward":
        (_recurrent("LSTM", 256), 2.0),
    "nn.LSTM 2 layers, hidden 64, seq 35, batch 20: forward+backward":
        (_recurrent("LSTM", 64), 2.0),
    "nn.GRU 2 layers, hidden 64, seq 35, batch 20: forward+backward":
        (_recurrent("GRU", 64), 2.0),
}


def run(strata=None, torch=None, rounds=5):
    results = []
    for name, (_, target) in WORKLOADS.items():
        times = fresh_process_medians("small_models", name, rounds=rounds)
        results.append(Result(name, times["strata"], times["torch"], target))
    return results


def _time(library, workload, steps=7, warmup=2):
    """Child: one thread, ``warmup`` untimed steps, then print the median of ``steps``."""
    import importlib

    from threadpoolctl import threadpool_limits
    m = importlib.import_module(library)
    threadpool_limits(1)
    m.set_num_threads(1)
    step = WORKLOADS[workload][0](m)
    for _ in range(warmup):
        step()
    samples = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        samples.append(time.perf_counter() - t0)
    print(statistics.median(samples))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--time"]:
        _time(sys.argv[2], sys.argv[3])
    else:
        from .harness import machine, table
        print(f"Machine: {machine()}; one thread each, fresh process per timing")
        print(table(run()))
