"""``nn.functional``: layers."""

__all__ = []
