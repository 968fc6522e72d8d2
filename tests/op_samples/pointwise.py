"""Sample inputs for the ops of ``ops/pointwise.py``."""

SAMPLES = {}
