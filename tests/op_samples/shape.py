"""Sample inputs for the ops of ``ops/shape.py``."""

SAMPLES = {}
