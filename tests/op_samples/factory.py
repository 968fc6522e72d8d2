"""Sample inputs for the ops of ``ops/factory.py``."""

SAMPLES = {}
