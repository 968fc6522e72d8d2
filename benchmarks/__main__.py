"""Run every benchmark: strata and PyTorch, same inputs, each side in its own fresh process (but
tracer, strata against strata); print medians and ratios.

    python -m benchmarks                 # everything
    python -m benchmarks --filter ops    # one group
"""

import argparse

import strata

from . import compile as compiled, device, distributed, ops, small_models, tracer, training
from .harness import machine, table

try:
    import torch
except ModuleNotFoundError:   # e.g. the environment scripts/demo.sh makes: time strata alone
    torch = None

NO_TORCH = ("PyTorch is not installed, so strata runs alone (the torch column is left out). To "
            "compare, install it into this environment: pip install torch==2.13.0 "
            "(or pip install -e '.[dev]').")

GROUPS = {"ops": ops.run, "training": training.run, "small_models": small_models.run,
          "tracer": tracer.run, "device": device.run, "compile": compiled.run,
          "distributed": distributed.run}   # distributed: 2-rank jobs, strata vs torchrun


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--filter", default="", help="run only groups whose name contains this")
    args = parser.parse_args()
    if torch is None:
        print(NO_TORCH)
    results = []
    for name, run in GROUPS.items():
        if args.filter in name:   # without torch, strata stands in for it and is not shown
            results.extend(run(strata, torch or strata))
    threads = f"; torch threads: {torch.get_num_threads()}" if torch else ""
    print(f"Machine: {machine()}{threads}")
    print(table(results, compared=torch is not None))


if __name__ == "__main__":
    main()
