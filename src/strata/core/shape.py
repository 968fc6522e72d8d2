"""Shape arithmetic shared by meta functions and kernels: Size, strides, dims, broadcasting.

Error wording follows PyTorch (``aten/src/ATen/ExpandUtils.cpp``, ``aten/src/ATen/InferSize.h``,
``c10/core/WrapDimMinimal.h``) because tests and users match on it.
"""

import operator


class Size(tuple):
    """The shape of a tensor: a tuple that prints as ``strata.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"strata.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


_CONTIGUOUS: dict = {}   # shape -> its row-major strides, for shapes of Python ints
_CONTIGUOUS_MAX = 4096   # entries; a program cycling through more starts the cache afresh


def contiguous_strides(shape) -> tuple:
    """Row-major strides (a size-0 dim counts as 1), cached: every fresh tensor, view and meta
    of a small op asks, for the few shapes a training loop repeats."""
    try:
        strides = _CONTIGUOUS.get(shape)
    except TypeError:   # a list
        strides = None
    if strides is not None:
        return strides
    out = []
    acc = 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    strides = tuple(reversed(out))
    if type(shape) is tuple and all(type(s) is int for s in shape):
        if len(_CONTIGUOUS) >= _CONTIGUOUS_MAX:
            _CONTIGUOUS.clear()
        _CONTIGUOUS[shape] = strides
    return strides


def wrap_dim(dim, ndim: int, *, scalar_ok: bool = True) -> int:
    """Turn a possibly negative dim into an index; IndexError with PyTorch's message if invalid."""
    if type(dim) is int:   # the common cases, on every view's meta
        if 0 <= dim < ndim:
            return dim
        if -ndim <= dim < 0:
            return dim + ndim
    dim = operator.index(dim)
    n = ndim if ndim > 0 or not scalar_ok else 1
    if ndim == 0 and not scalar_ok:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def wrap_dims(dims, ndim: int) -> tuple:
    """Wrap a dim list; duplicates raise like PyTorch's ``dim_list_to_bitset``."""
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        dup = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return out


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of several shapes, or PyTorch's "must match the size" RuntimeError."""
    if len(shapes) == 2:   # the common cases of a binary op, without the loop
        a, b = shapes
        if a == b or not b:
            return tuple(a)
        if not a:
            return tuple(b)
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, size in enumerate(shape):
            j = offset + i
            cur = out[j]
            if cur == size or size == 1:
                continue
            if cur == 1:
                out[j] = size
                continue
            raise RuntimeError(
                f"The size of tensor a ({cur}) must match the size of tensor b ({size}) at "
                f"non-singleton dimension {j}")
    return tuple(out)


def normalize_size(size) -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size)``; check for negatives."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        size = tuple(operator.index(s) for s in size)
    except TypeError:
        bad = next(s for s in size if not hasattr(s, "__index__"))
        raise TypeError(f"expected a sequence of integers or a single integer, got "
                        f"'{type(bad).__name__}'") from None
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"[{', '.join(map(str, size))}]")
    return size


def storage_extent(shape, strides) -> int:
    """Elements a layout spans in its storage, from its first element to its last (0 if it has
    no elements): what a strided tensor needs allocated."""
    extent = 1                  # a loop, not sum() of a generator: every device tensor asks
    for n, s in zip(shape, strides):
        if not n:
            return 0
        extent += (n - 1) * s
    return extent


# c10's storage_max(): "storage size calculations must fit in both" int64 and size_t.
STORAGE_MAX = 2 ** 63 - 1


def check_storage_size(shape, itemsize: int, strides=None) -> int:
    """The bytes a new tensor of ``shape`` (laid out with ``strides``, else contiguously) needs,
    checked before anything is allocated, as ``computeStorageNbytes`` (``EmptyTensor.cpp``) does:
    a size past int64 is PyTorch's RuntimeError, not a NumPy error after a huge allocation."""
    if strides is None:
        elements = 1
        for size in shape:
            elements *= size
    else:
        elements = storage_extent(shape, strides)
    nbytes = elements * itemsize
    if nbytes > STORAGE_MAX:
        layout = f"sizes=[{', '.join(map(str, shape))}]"
        if strides is not None:
            layout += f" and strides=[{', '.join(map(str, strides))}]"
        raise RuntimeError(f"Storage size calculation overflowed with {layout}")
    return nbytes


def check_numel(shape) -> None:
    """A view's element count must fit int64 too (``TensorImpl::compute_numel``)."""
    elements = 1
    for size in shape:
        elements *= size
    if elements > STORAGE_MAX:
        raise RuntimeError("numel: integer multiplication overflow")


def infer_size(shape, numel: int) -> tuple:
    """Resolve one ``-1`` in a view/reshape target, as ``at::infer_size``."""
    if type(shape) is tuple:   # usually a tuple of ints already: nothing to convert
        for s in shape:
            if type(s) is not int:
                shape = tuple(operator.index(s) for s in shape)
                break
    else:
        shape = tuple(operator.index(s) for s in shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"[{', '.join(map(str, shape))}]")
        else:
            known *= s
    if known == numel or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return shape
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of {numel} elements into shape "
                               f"[{', '.join(map(str, shape))}] because the unspecified "
                               f"dimension size -1 can be any value and is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size "
                       f"{numel}")
