"""What an operator *is*: an ``OpOverload`` with a schema, a meta function, maybe a decomposition.

Every op is one object, defined once with ``defop`` in the family file of ``ops/`` that it belongs
to. Each layer below keeps its own table keyed by that object (CPU kernels, derivatives, ...), and
the dispatcher installs ``OpOverload.__call__`` when it is imported (``ops/`` sits above
``dispatch/``, so it cannot import it).

* A **primitive** op has a meta function and needs a kernel per backend.
* A **composite** op has a ``decomposition`` over other ops; it is registered to
  ``CompositeImplicitAutograd``, so backends and autograd get it for free.
* A **view** op (its result aliases ``self``: ``Tensor(a)``) has a meta function that returns a
  ``ViewSpec``; one device-independent kernel makes the view for every backend.
"""

from dataclasses import dataclass

from .schema import Binder, parse_schema


@dataclass(slots=True, unsafe_hash=True)
class TensorSpec:
    """What a meta function says about an output: shape, dtype and (optionally) strides.

    Not frozen (nobody changes one): a frozen dataclass sets each field through
    ``object.__setattr__``, and meta functions make one per op call; hashable all the same."""

    shape: tuple
    dtype: object
    strides: tuple | None = None

    @property
    def ndim(self):
        return len(self.shape)


@dataclass(slots=True, unsafe_hash=True)
class ViewSpec:
    """The layout of a view over its input's storage (not frozen, as ``TensorSpec``)."""

    shape: tuple
    strides: tuple
    offset: int
    dtype: object = None  # None: same dtype as the input


class OpOverload:
    """One operator overload, e.g. ``aten.add.Tensor``. Call it like a function."""

    def __init__(self, schema, meta, decomposition, method, function, tags):
        self.schema = schema
        self.binder = Binder(schema)
        self.namespace = schema.namespace
        self.name = schema.op_name                       # "add.Tensor"
        self.qualname = f"{schema.namespace}::{self.name}"  # "aten::add.Tensor"
        self.meta = meta
        self.decomposition = decomposition
        self.method = method
        self.function = function
        self.tags = frozenset(tags)
        self.nargs = self.binder.n
        args = schema.arguments
        self.tensor_positions = tuple(i for i, a in enumerate(args) if a.is_tensor)
        self.tensorlist_positions = tuple(i for i, a in enumerate(args) if a.is_tensor_list)
        self.device_position = next((i for i, a in enumerate(args)
                                     if a.name == "device" and a.type == "Device?"), None)
        self.is_inplace = schema.is_inplace
        self.is_view = schema.is_view
        self.written_positions = tuple(i for i, a in enumerate(args) if a.is_write)
        self.dtype_rule = None      # pointwise ops: the promotion rule their meta uses
        self._dispatch_cache = {}   # DispatchKeySet -> kernel, owned by the dispatcher
        self._operator_entries = {}  # Note [Operator fast path], also the dispatcher's

    @property
    def is_composite(self) -> bool:
        return self.decomposition is not None

    def __repr__(self):
        return f"<OpOverload {self.qualname}>"

    def __call__(self, *args, **kwargs):  # replaced by strata.dispatch at import time
        raise RuntimeError("strata.dispatch has not been imported")


REGISTRY: dict = {}  # qualname -> OpOverload, in definition order


def defop(schema: str, meta=None, *, decomposition=None, method=None, function=None,
          tags=()) -> OpOverload:
    """Define an operator. ``method``/``function`` name the ``Tensor`` method and ``strata``
    function that call it (``True`` = the op's base name) when no hand-written wrapper is needed.
    """
    parsed = parse_schema(schema)
    base = parsed.name
    op = OpOverload(parsed, meta, decomposition,
                    base if method is True else method,
                    base if function is True else function, tags)
    if op.qualname in REGISTRY:
        raise RuntimeError(f"operator {op.qualname} is already defined")
    REGISTRY[op.qualname] = op
    _namespace(parsed.namespace)._add(op)
    return op


def register_decomposition(op: OpOverload):
    """Decorator: make ``op`` composite, decomposed by the decorated function."""
    def deco(fn):
        if op.decomposition is not None:
            raise RuntimeError(f"{op.qualname} already has a decomposition")
        op.decomposition = fn
        return fn
    return deco


class OpOverloadPacket:
    """All overloads of one name: ``aten.add`` has ``.Tensor``; calling it picks by arguments."""

    def __init__(self, namespace, name):
        self._qualname = f"{namespace}::{name}"
        self._overloads = {}

    def _add(self, op):
        self._overloads[op.schema.overload or "default"] = op

    def __getattr__(self, item):
        try:
            return self.__dict__["_overloads"][item]
        except KeyError:
            raise AttributeError(f"'{self._qualname}' has no overload named '{item}'") from None

    def overloads(self):
        return list(self._overloads)

    def __call__(self, *args, **kwargs):
        errors = []
        for op in self._overloads.values():
            try:
                op.binder.bind(args, kwargs)
            except TypeError as e:
                errors.append(str(e))
                continue
            return op(*args, **kwargs)
        raise TypeError(f"{self._qualname}() received an invalid combination of arguments: "
                        + "; ".join(errors))

    def __repr__(self):
        return f"<OpOverloadPacket {self._qualname}>"


class OpNamespace:
    """``strata.ops.<namespace>``: attribute access to the namespace's op packets."""

    def __init__(self, name):
        self._name = name
        self._packets = {}

    def _add(self, op):
        base = op.schema.name
        packet = self._packets.get(base)
        if packet is None:
            packet = self._packets[base] = OpOverloadPacket(self._name, base)
        packet._add(op)

    def __getattr__(self, item):
        try:
            return self.__dict__["_packets"][item]
        except KeyError:
            raise AttributeError(f"no operator named '{self._name}::{item}'") from None

    def __dir__(self):
        return list(self._packets)


NAMESPACES: dict = {}


def _namespace(name) -> OpNamespace:
    ns = NAMESPACES.get(name)
    if ns is None:
        ns = NAMESPACES[name] = OpNamespace(name)
    return ns


class _Ops:
    """``strata.ops``: ``strata.ops.aten.add.Tensor``, ``strata.ops.myns.myop``."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _namespace(name)


ops = _Ops()
aten = _namespace("aten")
