"""Hand-written frontends for ops whose PyTorch Python signature is irregular.

Each family module exports ``METHODS`` (installed on ``Tensor``) and ``FUNCTIONS`` (installed in
``strata``): e.g. ``max(x)`` / ``max(x, dim)`` / ``max(x, y)`` are three ops behind one name.
Regular ops need none of this: ``defop(..., method=True, function=True)`` generates them.
"""

from . import calculus, composites, indexing, linalg, loss, pointwise, reductions, shape

FAMILIES = (reductions, indexing, linalg, pointwise, loss, shape, calculus, composites)


def methods() -> dict:
    out = {}
    for family in FAMILIES:
        out.update(family.METHODS)
    return out


def functions() -> dict:
    out = {}
    for family in FAMILIES:
        out.update(family.FUNCTIONS)
    return out
