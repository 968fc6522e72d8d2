"""``nn.functional``: activations."""

__all__ = []
