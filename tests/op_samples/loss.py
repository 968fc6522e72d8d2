"""Sample inputs for the ops of ``ops/loss.py``."""

SAMPLES = {}
