"""Python indexing (``x[index]``, ``x[index] = value``) and the indexing ops' irregular frontends.

An index expression is translated as PyTorch does it (``torch/csrc/autograd/
python_variable_indexing.cpp`` and ``aten/src/ATen/TensorIndexing.h``), left to right over the
entries of the index tuple, with ``dim`` the position in the result so far:

* an int ``i`` -> ``select(dim, i)`` (a view; the dim disappears);
* a slice -> ``slice(dim, start, stop, step)`` (a view; ``step`` must be positive);
* ``None`` -> ``unsqueeze(dim)``; ``...`` skips the dims no other entry names;
* ``True``/``False`` -> ``unsqueeze(dim)`` plus the index ``[0]`` or ``[]`` on the new dim;
* a tensor, list or ndarray -> recorded as an index tensor for ``dim`` (a k-dim bool mask
  covers k dims); a 0-dim integer tensor acts as an int.

Basic entries only make views, which share storage. If any tensor index was recorded, one
``index.Tensor`` (read) or ``index_put_`` (write) over the view finishes the job, and the result
of a read is a copy. ``x[index] = v`` writes a view with ``copy_``/``fill_`` (broadcasting ``v``).
"""

import numbers
import warnings

import numpy as np

from .._tensor import install_indexing
from ..core import dtype as D
from ..core.tensor_impl import TensorImpl
from ..dispatch.dispatcher import direct_caller
from ..functions import write_out
from ..ops import factory as F
from ..ops import indexing as I
from ..ops import meta_rules as R
from ..ops import pointwise as P
from ..ops import scatter as S
from ..ops import shape as SH

_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result")
_MASK_DTYPES = (D.bool_, D.uint8)


def _is_tensor(x):
    return isinstance(x, TensorImpl)


def _is_int(x):
    """Python's ints (not bools) and NumPy's integer scalars: indices that select."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_sequence(x):
    return isinstance(x, (list, tuple, range, str, np.ndarray))


_HEAP_TYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def type_label(obj):
    """The name PyTorch's messages print for ``type(obj)``, CPython's ``tp_name``: "int",
    "numpy.ndarray" (an extension type names its module), a Python class's bare name."""
    t = type(obj)
    if t.__module__ == "builtins" or t.__flags__ & _HEAP_TYPE:
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _as_tuple(index):
    """NumPy's rule for a list index: it is a tuple of indices if it holds a slice, ``...``,
    ``None``, a tensor or a sequence (with a deprecation warning), else one index."""
    if type(index) is tuple:
        return index
    if _is_tensor(index) or not _is_sequence(index):
        return (index,)
    try:
        n = len(index)
    except TypeError:  # a 0-dim ndarray
        return (index,)
    if n >= 32:
        return (index,)
    for obj in index:
        if _is_tensor(obj) or _is_sequence(obj) or isinstance(obj, slice) or obj is None or \
                obj is Ellipsis:
            warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=3)
            return tuple(index)
    return (index,)


def _count_specified(indices):
    """Dims the index names: everything but ``None``/``...``/bools; a mask names its ndim."""
    count = 0
    for obj in indices:
        if _is_tensor(obj):
            count += obj.ndim if obj.dtype in _MASK_DTYPES else 1
        elif obj is not None and obj is not Ellipsis and obj is not True and obj is not False:
            count += 1
    return count


def _select(t, dim, index, real_dim):
    """``select`` with Python indexing's bounds message (``real_dim`` is the index position)."""
    shape = t._shape
    if not shape and index == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    size = shape[dim] if shape else 0
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size "
                         f"{size}")
    return _select_op(t, dim, index)


_select_op = direct_caller(SH.select)   # Note [Operator fast path]


def _slice_bound(value):
    if value is None or _is_int(value):
        return value
    if hasattr(value, "__index__"):
        return value.__index__()
    raise TypeError("slice indices must be integers or None or have an __index__ method")


def _slice(t, dim, s):
    start, stop, step = _slice_bound(s.start), _slice_bound(s.stop), _slice_bound(s.step)
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    if t._shape and not start and step == 1 and (stop is None or stop >= t._shape[dim]):
        return t  # the whole dim: no view needed (PyTorch skips this slice too)
    return SH.slice(t, dim, start, stop, step)


def _sequence_index(seq, device):
    """A list/ndarray index as a tensor: bool/uint8 data stays a mask, anything else is int64."""
    from ..creation import tensor
    t = tensor(seq)
    if t.dtype not in _MASK_DTYPES and t.dtype is not D.int64:
        t = t.to(D.int64)
    return t if device.type == "cpu" else t.to(device)


def _bool_index(value, device):
    """``x[True]``/``x[False]`` index a new size-1 dim with ``[0]`` or ``[]``."""
    return F.full((1,) if value else (0,), 0, dtype=D.int64, device=device)


def _record(tensors, dim, index):
    tensors.extend([None] * (dim - len(tensors)))
    tensors.append(index)


def _apply_slicing(self, indices):
    """Apply the basic entries as views; return the view and the tensor indices per dim."""
    specified = _count_specified(indices)
    if specified > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    result, dim, tensors = self, 0, []
    for real_dim, obj in enumerate(indices):
        if _is_int(obj):
            result = _select(result, dim, int(obj), real_dim)
            continue
        if isinstance(obj, slice):
            result = _slice(result, dim, obj)
            dim += 1
            continue
        if obj is Ellipsis:
            dim += self.ndim - specified
            continue
        if obj is None:
            result = SH.unsqueeze(result, dim)
            dim += 1
            continue
        if obj is True or obj is False:
            result = SH.unsqueeze(result, dim)
            _record(tensors, dim, _bool_index(obj, self.device))
            dim += 1
            continue
        if not _is_tensor(obj):
            if _is_sequence(obj):
                obj = _sequence_index(obj, self.device)
            elif hasattr(obj, "__index__") and not isinstance(obj, (bool, np.bool_)):
                result = _select(result, dim, obj.__index__(), real_dim)
                continue
            else:
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long "
                                 f"or byte Variables are valid indices (got {type_label(obj)})")
        if obj.ndim == 0 and obj.dtype.category != D.FLOATING:
            if obj.dtype in _MASK_DTYPES:
                result = SH.unsqueeze(result, dim)
                _record(tensors, dim, _bool_index(bool(obj.item()), self.device))
                dim += 1
            else:
                result = _select(result, dim, int(obj.item()), real_dim)
            continue
        _record(tensors, dim, obj)
        dim += obj.ndim if obj.dtype in _MASK_DTYPES else 1
    return result, tensors


def getitem(self, index):
    """``self[index]``: a view for basic indices, a copy when tensors index it."""
    kind = type(index)
    if kind is int:
        return _select(self, 0, index, 0)
    if kind is slice:
        if not self._shape:
            return SH.slice(self, 0, index.start, index.stop, 1)  # raises PyTorch's error
        result = _slice(self, 0, index)
    elif index is None:
        return SH.unsqueeze(self, 0)
    elif index is Ellipsis:
        return SH.alias(self)
    else:
        result, tensors = _apply_slicing(self, _as_tuple(index))
        if tensors:
            return I.index(result, tensors)
    return SH.alias(self) if result is self else result


def _check_value(self, value):
    """The value of ``x[i] = value``: a tensor, or a number that fits self's dtype."""
    if _is_tensor(value):
        return value
    if isinstance(value, (numbers.Integral, float)):
        return R.check_scalar_fits(value, self.dtype)
    raise TypeError(f"can't assign a {type_label(value)} to a {self.type()}")


def _copy_to(dst, src):
    """Write ``src`` (a number or a tensor broadcastable to ``dst``) into the view ``dst``."""
    if not _is_tensor(src):
        F.fill_(dst, src)
    elif dst._shape == src._shape:
        F.copy_(dst, src)
    elif src.ndim == 0 and src.device.type == "cpu":
        F.fill_(dst, R.check_scalar_fits(src.item(), dst.dtype))
    else:
        F.copy_(dst, SH.expand(_strip_leading_ones(src), tuple(dst.shape)))


def _strip_leading_ones(t):
    """PyTorch drops a value's leading size-1 dims before broadcasting it (slicePrefix1sSize)."""
    shape = t._shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return SH.view(t, shape[k:]) if k else t


def setitem(self, index, value):
    """``self[index] = value``, written in place (the version counter of ``self`` moves)."""
    value = _check_value(self, value)
    kind = type(index)
    if kind is int:
        return _copy_to(_select(self, 0, index, 0), value)
    if kind is slice:
        dst = _slice(self, 0, index) if self._shape else \
            SH.slice(self, 0, index.start, index.stop, 1)
        return _copy_to(dst, value)
    if index is False:
        return None
    if index is Ellipsis:
        return _copy_to(self, value)
    if index is None or index is True:
        return _copy_to(SH.unsqueeze(self, 0), value)
    sliced, tensors = _apply_slicing(self, _as_tuple(index))
    if not tensors:
        return _copy_to(sliced, value)
    if _is_tensor(value):
        value = _strip_leading_ones(value)
    else:  # all of scalar_tensor's arguments positionally: the dispatcher's fast path
        value = F.scalar_tensor(value, self.dtype, None, self.device, None)
    I.index_put_(sliced, tensors, value)
    return None


install_indexing(getitem, setitem)


# --- ops whose Python signature is irregular ------------------------------------------------------

def _scatter(inplace, self, dim, index, src, value, reduce):
    """Pick the overload: a tensor third argument is ``src``, a number is ``value``; ``reduce``
    selects the legacy reducing form."""
    if src is not None and not _is_tensor(src):  # scatter(dim, index, 2.0)
        src, value = None, src
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if src is not None:
        plain, reducing = (S.scatter_, S.scatter_reduce_legacy_) if inplace else \
            (S.scatter, S.scatter_reduce_legacy)
    else:
        plain, reducing = (S.scatter_value_, S.scatter_value_reduce_) if inplace else \
            (S.scatter_value, S.scatter_value_reduce)
    arg = value if src is None else src
    if reduce is None:
        return plain(self, dim, index, arg)
    return reducing(self, dim, index, arg, reduce=reduce)


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    """``scatter(dim, index, src)`` or ``scatter(dim, index, value)``, optionally ``reduce=``
    ``'add'``/``'multiply'``."""
    result = _scatter(False, input, dim, index, src, value, reduce)
    return result if out is None else write_out(out, result)


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    return _scatter(True, self, dim, index, src, value, reduce)


def masked_fill(input, mask, value):
    op = I.masked_fill_tensor if _is_tensor(value) else I.masked_fill
    return op(input, mask, value)


def masked_fill_(self, mask, value):
    op = I.masked_fill_tensor_ if _is_tensor(value) else I.masked_fill_
    return op(self, mask, value)


def index_fill(input, dim, index, value):
    op = S.index_fill_tensor if _is_tensor(value) else S.index_fill
    return op(input, dim, index, value)


def index_fill_(self, dim, index, value):
    op = S.index_fill_tensor_ if _is_tensor(value) else S.index_fill_
    return op(self, dim, index, value)


def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the nonzero elements: an (n, ndim) tensor, or one 1-D tensor per dim."""
    if as_tuple:
        return I.nonzero_numpy(input)
    result = I.nonzero(input)
    return result if out is None else write_out(out, result)


def where(condition, input=None, other=None, *, out=None):
    """``where(cond, x, y)`` picks elementwise; ``where(cond)`` is
    ``nonzero(cond, as_tuple=True)``."""
    if input is None and other is None:
        return I.where_nonzero(condition)
    if input is None or other is None:
        raise TypeError("where() expected both 'input' and 'other' (or neither)")
    result = P.where(condition, input, other)
    return result if out is None else write_out(out, result)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,
                 out=None):
    op = I.searchsorted if _is_tensor(input) else I.searchsorted_scalar
    result = op(sorted_sequence, input, out_int32=out_int32, right=right, side=side,
                sorter=sorter)
    return result if out is None else write_out(out, result)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    op = I.bucketize if _is_tensor(input) else I.bucketize_scalar
    result = op(input, boundaries, out_int32=out_int32, right=right)
    return result if out is None else write_out(out, result)


METHODS = {
    "scatter": lambda self, dim, index, src=None, value=None, *, reduce=None:
        _scatter(False, self, dim, index, src, value, reduce),
    "scatter_": scatter_,
    "masked_fill": masked_fill,
    "masked_fill_": masked_fill_,
    "index_fill": index_fill,
    "index_fill_": index_fill_,
    "nonzero": lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple),
}
FUNCTIONS = {
    "scatter": scatter, "masked_fill": masked_fill, "index_fill": index_fill,
    "nonzero": nonzero, "where": where, "searchsorted": searchsorted, "bucketize": bucketize,
}
