"""How the CPU special functions evaluate their approximations with few NumPy passes: Horner
polynomials and rationals computed in place, each piece of a piecewise approximation run only
on the elements in its range, and Python's ``math`` per element for inputs too small to repay
NumPy's fixed cost per call.

Separate from ``special.py`` and ``special_gamma.py`` because both use it.
"""

import numpy as np

_SMALL = 512  # below this many elements, one math.* call per element is faster


def _elementwise(fn, x):
    return np.array([fn(v) for v in x.reshape(-1).tolist()], np.float64).reshape(x.shape)


def _poly(x, coeffs):
    """Horner, in place: coeffs[0] + coeffs[1] * x + ... (one fresh array)."""
    out = x * coeffs[-1]
    for c in coeffs[-2:0:-1]:
        out += c
        out *= x
    out += coeffs[0]
    return out


def _ratio(x, num, den):
    out = _poly(x, num)
    out /= _poly(x, den)
    return out


def _working(x):
    """``x`` as an array in its working precision: float32 stays, everything else is float64."""
    x = np.asarray(x)
    return x if x.dtype == np.float32 else x.astype(np.float64)


def _split(flat, mask):
    """Indices where ``mask`` holds, and the elements there (index arrays gather and scatter
    several times faster than boolean masks)."""
    idx = np.flatnonzero(mask)
    return idx, flat[idx]
