"""Frontends of the linalg family whose Python signature differs from their schema."""

METHODS = {}
FUNCTIONS = {}
