"""Sample inputs for the ops of ``ops/linalg.py``."""

SAMPLES = {}
