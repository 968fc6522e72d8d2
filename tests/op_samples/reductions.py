"""Sample inputs for the ops of ``ops/reductions.py``."""

SAMPLES = {}
