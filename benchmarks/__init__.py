"""strata vs PyTorch, same workloads, one process: ``python -m benchmarks [--filter NAME]``."""
