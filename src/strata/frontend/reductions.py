"""Frontends of the reductions family whose Python signature differs from their schema."""

METHODS = {}
FUNCTIONS = {}
