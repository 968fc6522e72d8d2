"""``nn.functional``: losses."""

__all__ = []
