"""Sample inputs for the ops of ``ops/nn.py``."""

SAMPLES = {}
