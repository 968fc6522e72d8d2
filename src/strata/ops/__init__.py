"""Layer 2: what exists — every operator, defined once, with its schema and meta function.

Family files (``pointwise``, ``special``, ``reductions``, ``shape``, ``indexing``, ``linalg``,
``nn``, ``factory``) each define their ops with ``defop``; composite ops carry their decomposition.
``strata.ops.aten.<name>.<overload>`` reaches any of them.
"""

from . import (  # noqa: F401  (importing a family defines its ops)
    activation, factorizations, factory, indexing, linalg, loss, nn, pointwise, reductions, shape,
    sorting, sparse,
)
from . import pointwise_composites  # noqa: F401  (lerp, addcmul, isclose, ..., with pointwise)
from . import split_join  # noqa: F401  (split, chunk, unbind, hstack, ..., with shape)
from . import scatter  # noqa: F401  (gather/scatter/index_* ops, with indexing)
from . import dropout  # noqa: F401  (dropout and attention, with activation)
from . import dense, normalization, pooling  # noqa: F401  (nn layers, with nn)
from . import nn_composites  # noqa: F401  (conv2d, pad, pixel_shuffle, ..., with nn)
from . import sampling  # noqa: F401  (affine grids, grid_sample)
from . import distributions  # noqa: F401  (sampling ops of strata.distributions)
from . import random_fills  # noqa: F401  (random_, exponential_, ...: with factory's random ops)
from . import special  # noqa: F401  (special functions, with pointwise's makers)
from . import complex, fft, spectral  # noqa: F401  (complex parts and views; FFTs, stft)
from . import rnn  # noqa: F401  (fused recurrent cells)
from . import lu  # noqa: F401  (LU factorization, with factorizations)
from . import linalg_composites  # noqa: F401  (mv, dot, outer, ..., with linalg)
from . import factorization_composites  # noqa: F401  (lstsq, matrix_exp, ..., with factorizations)
from .op import REGISTRY, OpOverload, TensorSpec, ViewSpec, aten, defop, ops

__all__ = ["REGISTRY", "OpOverload", "TensorSpec", "ViewSpec", "aten", "defop", "ops"]
