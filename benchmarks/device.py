"""Issue 4's device workloads: launch overhead on sim, an MLP training step on sim vs cpu, and the
latency of a host synchronisation (polling vs interrupt). The torch column is PyTorch on the CPU.

    python -m benchmarks.device             # this group alone
    python -m benchmarks --filter device
"""

import time

import numpy as np

from .harness import Result, child_main, fresh_process_medians, median_time, sides

ROUNDS = 3
STEPS = 5


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


def _measure(m, workload):
    """Child: seconds for ``workload`` on library ``m`` (strata on sim or cpu; torch on the CPU)."""
    one = np.ones(1, np.float32)
    if m.__name__ == "torch":
        x, y = m.tensor(one), m.tensor(one)
        if workload == "mlp_cpu":
            step = _mlp_step(m, "cpu")
            return median_time(lambda: [step() for _ in range(STEPS)], min_time=0.5) / STEPS
        if workload.startswith("item"):
            return median_time(lambda: (x + y).item())
        return median_time(lambda: x + y)   # "launch"
    x, y = m.tensor(one).to("sim"), m.tensor(one).to("sim")
    if workload == "launch":
        return _launch_time(m, x, y)
    if workload == "throughput":
        def sim_add_throughput():
            for _ in range(100):
                x + y
            m.sim.synchronize()
        return median_time(sim_add_throughput) / 100
    if workload in ("mlp_cpu", "mlp_sim"):
        device = workload[4:]
        step = _mlp_step(m, device)

        def steps():
            for _ in range(STEPS):
                step()
            if device == "sim":
                m.sim.synchronize()
        return median_time(steps, min_time=0.5) / STEPS
    m.sim.set_sync_mode(workload.split("_")[1])   # "item_poll", "item_interrupt"
    return median_time(lambda: (x + y).item())


def run(strata, torch=None, rounds=ROUNDS):
    """Each timing in a fresh process per library, strata and PyTorch alternating
    (``harness.fresh_process_medians``). Rows whose two columns are both strata (sim vs cpu) use
    the strata medians of the rows above them, each also from fresh processes."""
    if not strata.sim.is_available():
        return []
    libraries = sides(strata, torch)

    def medians(workload, libs=libraries):
        times = fresh_process_medians("device", workload, rounds=rounds, libraries=libs)
        return times["strata"], times.get("torch", times["strata"])

    results = []
    s_launch, torch_add = medians("launch")
    results.append(Result("sim: x + y, 1 element (host time per launch)", s_launch, torch_add))
    s_tp, _ = medians("throughput", ("strata",))
    results.append(Result("sim: 100 x x + y, 1 element, then synchronize (per op)", s_tp,
                          torch_add))
    t_cpu, t_torch = medians("mlp_cpu")
    t_sim, _ = medians("mlp_sim", ("strata",))
    results.append(Result("MLP 784-512-512-10 b64 Adam step, strata cpu", t_cpu, t_torch))
    results.append(Result("MLP 784-512-512-10 b64 Adam step, strata sim", t_sim, t_torch))
    results.append(Result("MLP step: strata sim / strata cpu (torch column: strata cpu)", t_sim,
                          t_cpu, target=1.2))
    s_poll, t_item = medians("item_poll")
    s_interrupt, _ = medians("item_interrupt", ("strata",))   # torch's side: the same as poll's
    results.append(Result("sim: (x + y).item() round trip, sync by poll", s_poll, t_item))
    results.append(Result("sim: (x + y).item() round trip, sync by interrupt", s_interrupt,
                          t_item))
    return results


if __name__ == "__main__":
    if not child_main(_measure):
        import strata

        from .harness import machine, table
        try:
            import torch
        except ModuleNotFoundError:
            torch = None
        print(f"Machine: {machine()}; fresh process per timing")
        print(table(run(strata, torch), compared=torch is not None))
