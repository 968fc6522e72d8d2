"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``
(``torch/nn/modules/container.py``)."""

import operator
from collections import OrderedDict
from itertools import islice

from ..parameter import Parameter
from .module import Module


def _renumber(modules, items):
    """Keep the keys "0", "1", ... contiguous after an insert or delete, as PyTorch does."""
    modules.clear()
    for i, m in enumerate(items):
        modules[str(i)] = m


def _index(idx, n, what):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class _ModuleSequence:
    """The list methods ``Sequential`` and ``ModuleList`` share: submodules keyed "0", "1", ..."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        _renumber(self._modules, items)


class Sequential(_ModuleSequence, Module):
    """Modules called in order: ``Sequential(Linear(2, 3), ReLU())`` or with an OrderedDict."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        i = _index(idx, len(self), "Sequential")
        return next(islice(self._modules.values(), i, None))

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(self), "Sequential")])
        _renumber(self._modules, list(self._modules.values()))

    def __add__(self, other):
        out = Sequential()
        for m in list(self) + list(other):
            out.append(m)
        return out

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        super().insert(index, module)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence, Module):
    """A list of submodules, registered so their parameters are seen."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "")]]
        for k in targets:
            del self._modules[k]
        _renumber(self._modules, list(self._modules.values()))

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def extend(self, modules):
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def pop(self, key=-1):
        v = self[key]
        del self[key]
        return v

    def __repr__(self):
        if not self._modules:
            return "ModuleList()"
        return super().__repr__()


class _DictProtocol:
    """The dict methods ``ModuleDict`` and ``ParameterDict`` share, over ``self._order()`` (the
    dict whose keys are the entries, in insertion order)."""

    def __len__(self):
        return len(self._order())

    def __iter__(self):
        return iter(self._order())

    def __contains__(self, key):
        return key in self._order()

    def keys(self):
        return self._order().keys()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def update(self, values):
        items = values.items() if hasattr(values, "items") else values
        for key, value in items:
            self[key] = value


class ModuleDict(_DictProtocol, Module):
    """An ordered dict of submodules."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _order(self):
        return self._modules

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def clear(self):
        self._modules.clear()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()


class ParameterList(Module):
    """A list of parameters (tensors are wrapped into Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx, param):
        setattr(self, str(_index(idx, len(self), "ParameterList")), _as_param(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, params):
        return self.extend(params)

    def append(self, value):
        i = self._size
        self._size += 1
        setattr(self, str(i), _as_param(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        lines = []
        for i, p in enumerate(self):
            size = "x".join(str(s) for s in p.size())
            lines.append(f"({i}): Parameter containing: [{type(p).__module__.split('.')[0]}."
                         f"{p.dtype.name} of size {size}]")
        return "\n".join(lines)


class ParameterDict(_DictProtocol, Module):
    """An ordered dict of parameters."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def _order(self):
        return self._keys

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_param(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default


def _as_param(value):
    from ..._tensor import Tensor
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value
