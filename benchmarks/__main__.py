"""Run every benchmark: strata and PyTorch, same inputs, one process; print medians and ratios.

    python -m benchmarks                 # everything
    python -m benchmarks --filter ops    # one group
"""

import argparse

import strata
import torch

from . import device, ops, small_models, tracer, training
from .harness import machine, table

GROUPS = {"ops": ops.run, "training": training.run, "small_models": small_models.run,
          "tracer": tracer.run, "device": device.run}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--filter", default="", help="run only groups whose name contains this")
    args = parser.parse_args()
    results = []
    for name, run in GROUPS.items():
        if args.filter in name:
            results.extend(run(strata, torch))
    print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}")
    print(table(results))


if __name__ == "__main__":
    main()
