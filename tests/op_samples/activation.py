"""Sample inputs for the ops of ``ops/activation.py``."""

SAMPLES = {}
