"""Issue 12's distributed workloads, 2 local ranks: a DDP MLP training step (strata on MPI vs
torch DDP on gloo), all_reduce bus bandwidth for 4-64 MB, and DDP's overlap of communication with
backward.

    python -m benchmarks.distributed            # or: python -m benchmarks --filter distributed

Every measurement is its own fresh job: strata's under ``strata run --nproc-per-node 2`` and
torch's under ``torchrun --standalone --nproc-per-node 2``, running this same file, whose
``import torch`` is strata under ``strata run``. Jobs alternate strata/torch and repeat; the
result is the median over jobs of each job's median (rank 0's clock).
"""

import json
import os
import statistics
import subprocess
import sys
import time

RANKS = 2
SIZES_MB = (4, 16, 64)
HERE = os.path.abspath(__file__)


# --- what the ranks run -------------------------------------------------------------------------

def _median_seconds(fn, dist, iterations, warmup=3):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(iterations):
        dist.barrier()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _mlp(torch):
    nn = torch.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def _ddp_step(torch, dist):
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(_mlp(torch))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 784), torch.randint(0, 10, (32,))

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return {"step_s": _median_seconds(step, dist, 30)}


def _all_reduce(torch, dist):
    out = {}
    for mb in SIZES_MB:
        t = torch.ones(mb * (1 << 20) // 4)
        out[str(mb)] = _median_seconds(lambda: dist.all_reduce(t), dist, 10)
    return out


def _overlap(torch, dist):
    """Backward with DDP's bucketed, overlapped all-reduces vs backward (no_sync) followed by
    the same work one bucket after another: pack the bucket's grads, all-reduce, unpack."""
    nn = torch.nn
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(512, 512), nn.Tanh()]
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers), bucket_cap_mb=1)
    x = torch.randn(64, 512)
    params = list(model.parameters())
    buckets = [[params[i] for i in bucket] for bucket in model.bucket_indices]

    def overlapped():
        model.zero_grad()
        model(x).square().mean().backward()

    def serial():
        model.zero_grad()
        with model.no_sync():
            model(x).square().mean().backward()
        for bucket in buckets:
            flat = torch.cat([p.grad.reshape(-1) for p in bucket]) / dist.get_world_size()
            dist.all_reduce(flat)
            for p, part in zip(bucket, flat.split([p.numel() for p in bucket])):
                p.grad.copy_(part.view(p.shape))
    return {"overlapped_s": _median_seconds(overlapped, dist, 15),
            "serial_s": _median_seconds(serial, dist, 15), "buckets": len(buckets)}


JOBS = {"ddp": _ddp_step, "all_reduce": _all_reduce, "overlap": _overlap}


def _rank_main(job):
    import torch   # strata, when started by `strata run`
    import torch.distributed as dist
    dist.init_process_group("gloo")
    result = JOBS[job](torch, dist)
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


# --- the orchestrator ---------------------------------------------------------------------------

def _job(framework, job):
    bin_dir = os.path.dirname(sys.executable)
    if framework == "strata":
        cmd = [sys.executable, "-m", "strata", "run", "--nproc-per-node", str(RANKS)]
    else:
        cmd = [os.path.join(bin_dir, "torchrun"), "--standalone", "--nproc-per-node",
               str(RANKS)]
    done = subprocess.run(cmd + [HERE, "--rank-job", job], capture_output=True, text=True,
                          timeout=600)
    for line in done.stdout.splitlines():
        if "RESULT " in line:
            return json.loads(line.split("RESULT ", 1)[1])
    raise RuntimeError(f"{framework} {job} job failed:\n{done.stdout[-2000:]}"
                       f"{done.stderr[-2000:]}")


def _medians(framework, job, repeats, other=None):
    runs = []
    for _ in range(repeats):
        runs.append(_job(framework, job))
        if other is not None:
            other.append(_job("torch", job))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def _bus_bandwidth(mb, seconds):
    """NCCL-tests' bus bandwidth of an all-reduce: 2 (n - 1) / n * bytes / time."""
    return 2 * (RANKS - 1) / RANKS * mb * (1 << 20) / seconds


def run(strata=None, torch=None, repeats=3):
    from .harness import Result   # here: the ranks run this file as a plain script
    results = []
    torch_runs = []
    ours = _medians("strata", "ddp", repeats, torch_runs)
    theirs = statistics.median(r["step_s"] for r in torch_runs)
    results.append(Result("DDP MLP step, 2 ranks (784-512-512-10, batch 32/rank; torch: gloo)",
                          ours["step_s"], theirs, target=1.2))
    torch_runs = []
    ours = _medians("strata", "all_reduce", repeats, torch_runs)
    for mb in SIZES_MB:
        theirs = statistics.median(r[str(mb)] for r in torch_runs)
        # Result's ratio is strata/torch time; bus bandwidth ratio is its inverse (>= 1.0 wanted)
        results.append(Result(f"all_reduce {mb} MB, 2 ranks (bus bw strata "
                              f"{_bus_bandwidth(mb, ours[str(mb)]) / 1e9:.2f} GB/s, torch gloo "
                              f"{_bus_bandwidth(mb, theirs) / 1e9:.2f} GB/s)",
                              ours[str(mb)], theirs, target=1.0))
    overlap = _medians("strata", "overlap", repeats)
    results.append(Result(f"strata DDP backward+comm overlapped vs serial "
                          f"({overlap['buckets']} buckets; 'torch' column = serial)",
                          overlap["overlapped_s"], overlap["serial_s"], target=1.0))
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rank-job":
        _rank_main(sys.argv[2])
    else:
        from .harness import machine, table
        print(f"Machine: {machine()} (shared; {RANKS} ranks on it)")
        print(table(run()))
