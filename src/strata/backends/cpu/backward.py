"""CPU backward lanes (Note [CPU backward lanes], ``autograd/derivatives/__init__.py``): the
formulas of the nodes a small model's backward runs most, computed from the tensors' arrays with
the NumPy calls the CPU kernels of the formula's ops make, or by those kernels themselves.

A linear layer's ``AddmmBackward0`` is two ``mm``s, three transposes and the bias's ``sum``
(six dispatched ops, each with its meta); a ``gather``'s backward is a ``full`` of zeros and a
``scatter_add``. Each op costs a few microseconds of Python for a product of a few hundred
numbers; the lane does the node in a third of the bytecodes. ``TBackward0``, ``TanhBackward0``
and ``LogSoftmaxBackward0`` are one op each: their lanes call that op's CPU kernel, skipping
only the dispatcher. Results are the formula's, bit for bit (same NumPy calls on the same
arrays, same layouts, transposes as views of the products). Anything else (other dtypes and
devices, other scalars, a complex tanh) returns NotImplemented and the formula runs.

A lane stands for the CPU kernels shipped with strata: while one of them is replaced
(``Library.impl`` on CPU for ``mm``), every lane steps aside and the formulas dispatch to the
new kernel (``register_cpu_backward``).
"""

import numpy as np

from ..._tensor import CPU_KEYSET, from_array
from ...autograd.derivatives import register_cpu_backward
from ...core import dtype as D
from ...core.shape import wrap_dim
from ...ops import activation as A
from ...ops import linalg as L
from ...ops import pointwise as P
from ...ops import scatter as SC
from ...ops import shape as S
from ..views import view_kernel
from . import native
from .activation import KERNELS as ACTIVATION_KERNELS
from .array import cpu_kernel
from .linalg import _blas_ready, matmul
from .scatter import _at_least_1d, _coords

_DTYPES = (D.float32, D.float64)
# the kernels a formula's op reaches on the CPU (no dispatcher on the way: nothing to choose)
_transpose, _t = view_kernel(S.transpose), view_kernel(S.t)
_tanh_backward = ACTIVATION_KERNELS[A.tanh_backward]
_log_softmax_backward = ACTIVATION_KERNELS[A._log_softmax_backward_data]


def _array(t):
    arr = t._array
    return arr if arr is not None else t._np()


def _takes(t, dt):
    """A CPU tensor of dtype ``dt`` (the lanes' one dtype per node)."""
    return t._keyset == CPU_KEYSET and t.dtype is dt


def addmm_backward(node, grad):
    """``linear``'s node (beta = alpha = 1, float32/float64 matrices): the bias's gradient is
    ``grad`` summed over rows (``sum_to``), mat1's ``grad @ mat2^T`` (``mm_mat1_backward``),
    mat2's ``mat1^T @ grad``, or ``(grad^T @ mat1)^T`` for a column-major mat2 (a
    ``weight.t()``: ``mm_mat2_backward``), as ``derivatives/linalg.py`` computes them."""
    dt = grad.dtype
    beta, alpha = node.beta, node.alpha
    if dt not in _DTYPES or grad._keyset != CPU_KEYSET or beta.__class__ is not int \
            or alpha.__class__ is not int or beta != 1 or alpha != 1:
        return NotImplemented
    needs_self, needs_mat1, needs_mat2 = node._needs
    # mat2: the tensor when mat1 needs a gradient, else only its geometry (or nothing)
    mat2 = node.mat2 if needs_mat1 or needs_mat2 else None
    mat1 = node.mat1 if needs_mat2 else None
    if needs_mat1 and not _takes(mat2, dt) or needs_mat2 and not _takes(mat1, dt):
        return NotImplemented
    g = _blas_ready(_array(grad))
    self_grad = mat1_grad = mat2_grad = None
    if needs_self:
        shape = node._input_meta[0][0]
        if len(shape) == 1 and grad._shape[1:] == shape:   # a bias: ``sum`` over the rows
            bias_grad = native.column_sum(g)       # NumPy's bits, the columns on the pool
            self_grad = from_array(np.add.reduce(g, axis=0) if bias_grad is None
                                   else bias_grad, dt)
        else:
            self_grad = grad   # validate_outputs sums it to the input's shape
    if needs_mat1:
        mat1_grad = from_array(matmul(g, _blas_ready(_array(mat2).T)), dt)
    if needs_mat2:
        a = _blas_ready(_array(mat1))
        (rows, _), strides = (mat2._shape, mat2.stride()) if needs_mat1 else mat2[:2]
        if strides[0] == 1 and strides[1] == rows:
            mat2_grad = _transpose(from_array(matmul(_blas_ready(g.T), a), dt), -2, -1)
        else:
            mat2_grad = from_array(matmul(_blas_ready(a.T), g), dt)
    return self_grad, mat1_grad, mat2_grad


def gather_backward(node, grad):
    """``scatter_add(zeros(self's shape), dim, index, grad)``, the zeros made in place. The
    index was bounds-checked by the forward ``gather``, and is version-checked on unpack."""
    dt = grad.dtype
    index = node.index
    if dt not in _DTYPES or grad._keyset != CPU_KEYSET or index._keyset != CPU_KEYSET \
            or grad._shape != index._shape or not grad.numel():
        return NotImplemented
    shape = node.sizes("self")
    out = np.zeros(shape, dt.np)
    target, idx, values = _at_least_1d(out), _at_least_1d(_array(index)), _array(grad)
    d = wrap_dim(node.dim, len(shape))
    if idx.size == 1:
        # one element (a policy's action at batch 1): at index 0 on every other dim, so one
        # scalar add (0 + g, as scatter_add: -0.0 becomes 0.0) where fancy indexing sets up
        # index arrays for ~2 us
        at = [0] * target.ndim
        at[d] = idx.item()
        target[tuple(at)] += values.reshape(-1)[0]
    else:
        np.add.at(target, _coords(idx, d), _at_least_1d(values))
    return from_array(out, dt), None


def t_backward(node, grad):
    """``t`` is its own adjoint: the view's kernel itself."""
    return _t(grad) if grad._keyset == CPU_KEYSET else NotImplemented


def tanh_backward(node, grad):
    """``tanh_backward(grad, result)``'s kernel (a complex result takes the formula)."""
    result = node.result
    dt = result.dtype
    if dt not in _DTYPES or not _takes(grad, dt) or result._keyset != CPU_KEYSET:
        return NotImplemented
    return _tanh_backward(grad, result)


def log_softmax_backward(node, grad):
    """``_log_softmax_backward_data(grad, result, dim, result.dtype)``'s kernel."""
    result = node.result
    if not _takes(grad, result.dtype) or result._keyset != CPU_KEYSET:
        return NotImplemented
    return _log_softmax_backward(grad, result, node.dim, result.dtype)


LANES = {
    L.addmm: addmm_backward,
    SC.gather: gather_backward,
    P.tanh: tanh_backward,
    A._log_softmax: log_softmax_backward,
}


VIEW_LANES = {S.t: t_backward}   # views compute nothing: no IEEE state or allocation to guard


def register():
    for op, lane in LANES.items():
        register_cpu_backward(op, cpu_kernel(lane))
    for op, lane in VIEW_LANES.items():
        register_cpu_backward(op, lane)
