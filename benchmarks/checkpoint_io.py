"""Checkpoint save/load time and load peak memory, strata vs PyTorch (issue 13).

    PYTHONPATH=src python -m benchmarks.checkpoint_io [--mib 480] [--repeats 5]

Every measurement runs in a fresh process (strata and torch interleaved), so one run's page cache
and allocator state do not flatter the next; reported are medians. The load's memory cost is the
process's peak RSS during ``load`` minus its RSS before it, divided by the file size.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, os, sys, time
framework, action, path, mib = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if framework == "torch":
    import torch as fw
else:
    import strata as fw

def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024

# 8 tensors, as a state dict of a model would hold them.
n = mib * 2**20 // 4 // 8
if action == "save":
    sd = {f"layer{i}.weight": fw.ones(n) for i in range(8)}
    start = time.perf_counter()
    fw.save(sd, path)
    print(json.dumps({"s": time.perf_counter() - start}))
else:
    before = rss("VmRSS:")
    start = time.perf_counter()
    sd = fw.load(path)
    seconds = time.perf_counter() - start
    assert float(sd["layer7.weight"][-1]) == 1.0
    peak = rss("VmHWM:") - before
    print(json.dumps({"s": seconds, "peak_over_file": peak / os.path.getsize(path)}))
"""


def _run(framework, action, path, mib):
    out = subprocess.run([sys.executable, "-c", _CHILD, framework, action, path, str(mib)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=480)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cases = {"strata .pt (zip)": ("strata", "ckpt.pt"),
             "strata .safetensors": ("strata", "ckpt.safetensors"),
             "torch .pt": ("torch", "torch.pt")}
    results = {name: {"save": [], "load": [], "peak": []} for name in cases}
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as tmp:
        for _ in range(args.repeats):
            for name, (framework, file) in cases.items():
                path = os.path.join(tmp, file)
                results[name]["save"].append(_run(framework, "save", path, args.mib)["s"])
                loaded = _run(framework, "load", path, args.mib)
                results[name]["load"].append(loaded["s"])
                results[name]["peak"].append(loaded["peak_over_file"])
    torch_save = statistics.median(results["torch .pt"]["save"])
    print(f"{args.mib} MiB state dict, medians of {args.repeats} fresh processes each "
          f"(machine: {os.cpu_count()} cores, shared)")
    print(f"{'case':24} {'save s':>8} {'vs torch':>9} {'load s':>8} {'load peak/file':>15}")
    for name, r in results.items():
        save = statistics.median(r["save"])
        print(f"{name:24} {save:8.3f} {save / torch_save:8.2f}x {statistics.median(r['load']):8.3f}"
              f" {statistics.median(r['peak']):14.2f}x")


if __name__ == "__main__":
    main()
