"""Frontends of the indexing family whose Python signature differs from their schema."""

METHODS = {}
FUNCTIONS = {}
