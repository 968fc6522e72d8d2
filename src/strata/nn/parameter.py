"""``Parameter``: a leaf tensor that a Module registers as learnable; ``Buffer``: state that is not.

A Parameter is a Tensor subclass sharing the data of the tensor it was made from (as PyTorch's
``torch/nn/parameter.py``), with ``requires_grad=True`` by default.
"""

from .._tensor import Tensor, make_tensor


def _share(cls, data):
    """A new ``cls`` instance over the same storage and layout as ``data``."""
    t = make_tensor(data._storage, data._offset, data._shape, data._get_strides(), data.dtype,
                    data.device, data._keyset, data._version_counter())
    t.__class__ = cls
    t._array = data._array
    return t


class Parameter(Tensor):
    """A learnable tensor: ``nn.Parameter(strata.randn(3, 4))``."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..creation import empty
            data = empty(0)
        t = _share(cls, data.detach())
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..creation import empty
            data = empty(0)
        t = _share(cls, data.detach())
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


class UninitializedParameter(Parameter):
    """A parameter whose shape a lazy module learns from its first input (``LazyLinear``):
    ``materialize(shape)`` gives it memory and makes it a plain ``Parameter``."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ..creation import empty
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None):
        from ..creation import empty
        self.data = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer(Tensor):
    """The buffer counterpart of ``UninitializedParameter`` (lazy batch norm statistics)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        from ..creation import empty
        t = _share(cls, empty(0, device=device, dtype=dtype))
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

    materialize = UninitializedParameter.materialize

    def __repr__(self):
        return "<UninitializedBuffer>"
