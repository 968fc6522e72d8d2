"""Python builtins evaluated symbolically (len, isinstance, range, zip, getattr, super, ...).

A builtin whose arguments are all constants is folded; one that touches a tensor either records
an op (``abs(x)``, ``max`` of tensors is not allowed by Python either) or graph-breaks. ``print``
and anything not listed here break the graph, as in Dynamo.
"""

import builtins
import itertools
import math
import operator

from .in_graph import is_compiling
from .variables import (BaseListVariable, ConstantVariable, DictVariable, IteratorVariable,
                        ListVariable, SymIntVariable, TensorVariable, TupleVariable, Unsupported,
                        VariableTracker)


class BuiltinVariable(VariableTracker):
    def __init__(self, fn, source=None):
        self.fn = fn
        self.source = source

    def as_python_constant(self):
        return self.fn

    def python_type(self):
        return type(self.fn)

    def reconstruct(self, codegen):
        return self.source.expr if self.source is not None else codegen.constant(self.fn)

    def call(self, tx, args, kwargs):
        handler = _HANDLERS.get(self.fn)
        if handler is not None:
            return handler(tx, *args, **kwargs)
        if self.fn in _FOLDABLE and all(a.is_constant() for a in [*args, *kwargs.values()]):
            return tx.wrap_constant(self.fn(*(a.as_python_constant() for a in args),
                                            **{k: v.as_python_constant()
                                               for k, v in kwargs.items()}))
        if self.fn in _OPERATORS:
            return tx.binary_op(self.fn, *args) if len(args) == 2 else \
                tx.unary_op(self.fn, args[0])
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        raise Unsupported(f"call to builtin {name}")


def _len(tx, obj):
    from .modules import NNModuleVariable
    if isinstance(obj, NNModuleVariable):
        return ConstantVariable(obj.length(tx))
    if isinstance(obj, TensorVariable):
        return tx.output.size_of(tx, obj, 0)
    if isinstance(obj, (BaseListVariable, DictVariable)):
        return ConstantVariable(len(obj.items))
    return ConstantVariable(len(obj.as_python_constant()))


def _isinstance(tx, obj, classes):
    cls = obj.python_type()
    wanted = classes.as_python_constant()
    return ConstantVariable(issubclass(cls, wanted))


def _range(tx, *args):
    return ConstantVariable(range(*(tx.as_int(a) for a in args)))


def _enumerate(tx, iterable, start=None):
    first = 0 if start is None else start.as_python_constant()
    items = tx.unpack(iterable)
    return IteratorVariable([TupleVariable([ConstantVariable(first + i), x])
                             for i, x in enumerate(items)])


def _zip(tx, *iterables, strict=None):
    lists = [tx.unpack(it) for it in iterables]
    return IteratorVariable([TupleVariable(list(group)) for group in zip(*lists)])


def _iter(tx, obj):
    return obj if isinstance(obj, IteratorVariable) else IteratorVariable(tx.unpack(obj))


def _next(tx, it, *default):
    item = it.next(tx)
    if item is None:
        if default:
            return default[0]
        raise Unsupported("StopIteration from next()")
    return item


def _min_max(fn):
    def handler(tx, *args, **kwargs):
        items = tx.unpack(args[0]) if len(args) == 1 else list(args)
        if all(x.is_constant() for x in items):
            return ConstantVariable(fn(x.as_python_constant() for x in items))
        if any(isinstance(x, SymIntVariable) for x in items):
            return tx.wrap_constant(fn(tx.as_int(x) for x in items))
        raise Unsupported(f"{fn.__name__}() of tensors")
    return handler


def _getattr(tx, obj, name, *default):
    try:
        return obj.getattr(tx, name.as_python_constant())
    except Unsupported:
        if default:
            return default[0]
        raise


def _hasattr(tx, obj, name):
    attr = name.as_python_constant()
    if obj.source is None and not hasattr(obj, "value") and not hasattr(obj, "module"):
        raise Unsupported("hasattr on a value without a source")
    target = getattr(obj, "module", getattr(obj, "value", None))
    if isinstance(obj, TensorVariable):
        target = obj.example
    return ConstantVariable(hasattr(target, attr))


def _super(tx, *args):
    if args:
        cls, obj = args[0].as_python_constant(), args[1]
    else:
        cls, obj = tx.super_args()
    return SuperVariable(cls, obj)


def _sequence(kind):
    def handler(tx, obj=None):
        items = [] if obj is None else tx.unpack(obj)
        return TupleVariable(items) if kind is tuple else ListVariable(items)
    return handler


def _dict(tx, obj=None, **kwargs):
    items = {}
    if obj is not None:
        for pair in tx.unpack(obj):
            k, v = tx.unpack(pair)
            items[k.as_python_constant()] = v
    items.update(kwargs)
    return DictVariable(items)


def _scalar(fn):
    def handler(tx, obj=None, *rest):
        if obj is None:
            return ConstantVariable(fn())
        if isinstance(obj, TensorVariable):
            raise Unsupported(f"{fn.__name__}() of a tensor (reads its data)")
        return ConstantVariable(fn(tx.as_int(obj) if isinstance(obj, SymIntVariable)
                                   else obj.as_python_constant(), *(r.as_python_constant()
                                                                    for r in rest)))
    return handler


def _bool(tx, obj=None):
    return ConstantVariable(False if obj is None else tx.truth(obj))


def _type(tx, obj):
    return tx.wrap_constant(obj.python_type())


def _abs(tx, obj):
    return tx.unary_op(operator.abs, obj)


def _sum(tx, iterable, start=None):
    items = tx.unpack(iterable)
    total = start if start is not None else ConstantVariable(0)
    for item in items:
        total = tx.binary_op(operator.add, total, item)
    return total


def _chain(tx, *iterables):
    return IteratorVariable([x for it in iterables for x in tx.unpack(it)])


def _all_any(fn):
    def handler(tx, iterable):
        return ConstantVariable(fn(tx.truth(x) for x in tx.unpack(iterable)))
    return handler


def _sorted(tx, iterable, key=None, reverse=None):
    if key is not None:
        raise Unsupported("sorted(key=...)")
    values = [x.as_python_constant() for x in tx.unpack(iterable)]
    rev = False if reverse is None else reverse.as_python_constant()
    return ListVariable([ConstantVariable(v) for v in sorted(values, reverse=rev)])


def _reversed(tx, seq):
    return IteratorVariable(tx.unpack(seq)[::-1])


class SuperVariable(VariableTracker):
    def __init__(self, cls, obj):
        self.cls, self.obj = cls, obj

    def getattr(self, tx, name):
        from .callables import UserMethodVariable
        obj_type = self.obj.python_type()
        mro = obj_type.__mro__
        for klass in mro[mro.index(self.cls) + 1:]:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if callable(attr) and hasattr(attr, "__code__"):
                    return UserMethodVariable(attr, self.obj)
                raise Unsupported(f"super().{name}")
        raise Unsupported(f"super().{name} not found")


_HANDLERS = {
    builtins.len: _len, builtins.isinstance: _isinstance, builtins.range: _range,
    builtins.enumerate: _enumerate, builtins.zip: _zip, builtins.iter: _iter,
    builtins.next: _next, builtins.min: _min_max(min), builtins.max: _min_max(max),
    builtins.getattr: _getattr, builtins.hasattr: _hasattr, builtins.super: _super,
    builtins.list: _sequence(list), builtins.tuple: _sequence(tuple), builtins.dict: _dict,
    builtins.int: _scalar(int), builtins.float: _scalar(float), builtins.str: _scalar(str),
    builtins.bool: _bool, builtins.type: _type, builtins.abs: _abs, builtins.sum: _sum,
    builtins.all: _all_any(all), builtins.any: _all_any(any), builtins.sorted: _sorted,
    builtins.reversed: _reversed, itertools.chain: _chain,
    is_compiling: lambda tx: ConstantVariable(True),
}

_FOLDABLE = {builtins.round, builtins.divmod, builtins.pow, builtins.chr, builtins.ord,
             builtins.repr, builtins.hash, builtins.callable, builtins.issubclass,
             builtins.slice, builtins.set, builtins.frozenset} | {
    getattr(math, n) for n in dir(math) if callable(getattr(math, n))}

_OPERATORS = {getattr(operator, n) for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos",
    "getitem", "lt", "le", "gt", "ge", "eq", "ne", "and_", "or_", "xor", "lshift", "rshift",
    "invert", "not_", "is_", "is_not", "contains")}


def is_supported_builtin(value) -> bool:
    try:
        return value in _HANDLERS or value in _FOLDABLE or value in _OPERATORS
    except TypeError:   # unhashable: not a builtin
        return False
