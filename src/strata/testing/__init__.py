"""``strata.testing``: ``assert_close``, with PyTorch's signature, tolerances and messages.

    >>> import strata
    >>> strata.testing.assert_close(strata.tensor([1.0, 2.0]), strata.tensor([1.0, 2.0000001]))
"""

from ._comparison import assert_close

__all__ = ["assert_close"]
