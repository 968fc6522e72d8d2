"""Issue 4's device workloads: launch overhead on sim, an MLP training step on sim vs cpu, and the
latency of a host synchronisation (polling vs interrupt). The torch column is PyTorch on the CPU.
"""

import time

import numpy as np

from .harness import Result, median_time


def _launch_time(strata, x, y, n=200, repeats=7):
    """Host seconds per ``x + y`` launch on sim (the device catches up outside the timing)."""
    samples = []
    for _ in range(repeats):
        strata.sim.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            x + y
        samples.append((time.perf_counter() - t0) / n)
    strata.sim.synchronize()
    return float(np.median(samples))


def _mlp_step(m, device):
    m.manual_seed(0)
    nn = m.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10)).to(device)
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((64, 784), dtype=np.float32)).to(device)
    y = m.tensor(rng.integers(0, 10, 64)).to(device)

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def run(strata, torch):
    if not strata.sim.is_available():
        return []
    results = []
    one = np.ones(1, np.float32)
    sx, sy = strata.tensor(one).to("sim"), strata.tensor(one).to("sim")
    tx, ty = torch.tensor(one), torch.tensor(one)
    torch_add = median_time(lambda: tx + ty)
    results.append(Result("sim: x + y, 1 element (host time per launch)",
                          _launch_time(strata, sx, sy), torch_add))

    def sim_add_throughput():
        for _ in range(100):
            sx + sy
        strata.sim.synchronize()
    results.append(Result("sim: 100 x x + y, 1 element, then synchronize (per op)",
                          median_time(sim_add_throughput) / 100, torch_add))

    steps = 5
    cpu_step, sim_step, torch_step = (_mlp_step(strata, "cpu"), _mlp_step(strata, "sim"),
                                      _mlp_step(torch, "cpu"))

    def on_sim():
        for _ in range(steps):
            sim_step()
        strata.sim.synchronize()
    t_cpu = median_time(lambda: [cpu_step() for _ in range(steps)], min_time=1.0) / steps
    t_sim = median_time(on_sim, min_time=1.0) / steps
    t_torch = median_time(lambda: [torch_step() for _ in range(steps)], min_time=1.0) / steps
    results.append(Result("MLP 784-512-512-10 b64 Adam step, strata cpu", t_cpu, t_torch))
    results.append(Result("MLP 784-512-512-10 b64 Adam step, strata sim", t_sim, t_torch))
    results.append(Result("MLP step: strata sim / strata cpu (torch column: strata cpu)", t_sim,
                          t_cpu, target=1.2))

    before = strata.sim.get_sync_mode()
    for mode in ("poll", "interrupt"):
        strata.sim.set_sync_mode(mode)
        results.append(Result(f"sim: (x + y).item() round trip, sync by {mode}",
                              median_time(lambda: (sx + sy).item()),
                              median_time(lambda: (tx + ty).item())))
    strata.sim.set_sync_mode(before)
    return results
