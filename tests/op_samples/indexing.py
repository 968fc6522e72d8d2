"""Sample inputs for the ops of ``ops/indexing.py``."""

SAMPLES = {}
