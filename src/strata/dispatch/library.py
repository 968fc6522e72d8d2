"""``strata.library``: define operators and register kernels from Python, as ``torch.library``.

    lib = Library("mylib", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
    strata.ops.mylib.twice(strata.ones(3))

``impl`` takes a dispatch key name: a backend ("CPU", "Meta", "PrivateUse1"), an autograd key
("AutogradCPU", "Autograd") or an alias ("CompositeImplicitAutograd",
"CompositeExplicitAutograd"). A kernel registered to CompositeImplicitAutograd is a
decomposition: autograd flows through the ops it calls.
"""

from ..ops.op import REGISTRY, NAMESPACES, defop
from . import keys as K
from .dispatcher import FALLTHROUGH, deregister_fallback, deregister_kernel, register_fallback, \
    register_kernel

fallthrough_kernel = FALLTHROUGH
_KINDS = ("DEF", "IMPL", "FRAGMENT")
_defined_namespaces = set()


class Library:
    """A handle that owns the definitions and registrations made through it."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind!r}; expected one of {_KINDS}")
        if kind == "DEF":
            if ns in _defined_namespaces or (ns in NAMESPACES and ns == "aten"):
                raise ValueError(f"Only a single TORCH_LIBRARY can be used to register the "
                                 f"namespace {ns}; please put all of your definitions in a "
                                 f"single TORCH_LIBRARY block.")
            _defined_namespaces.add(ns)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._registrations = []     # (op, key) pairs to undo in _destroy
        self._fallbacks = []
        self._defined = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define a new operator in this namespace from a schema string; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on an IMPL library")
        if "::" not in schema.split("(")[0]:
            schema = f"{self.ns}::{schema}"
        op = defop(schema, tags=tags)
        self._defined.append(op)
        return op.name

    def _lookup(self, op_name):
        if not isinstance(op_name, str):
            return op_name
        name = op_name if "." in op_name else op_name
        qual = name if "::" in name else f"{self.ns}::{name}"
        op = REGISTRY.get(qual) or REGISTRY.get(qual + ".default")
        if op is None:
            raise RuntimeError(f"operator {qual} does not exist; define it first")
        return op

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``."""
        op = self._lookup(op_name)
        key = K.key_by_name(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        if with_keyset:
            register_kernel(op, key, lambda op_, ks, args: fn(ks, *args), boxed=True)
        else:
            register_kernel(op, key, fn)
        self._registrations.append((op, key))

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """A fallback for every op at one key; ``fn(op, keyset, args)`` (boxed)."""
        key = K.key_by_name(dispatch_key or self.dispatch_key)
        if fn is FALLTHROUGH:
            register_fallback(key, FALLTHROUGH)
        else:
            register_fallback(key, fn if with_keyset else
                              (lambda op, ks, args: fn(op, *args)))
        self._fallbacks.append(key)

    def _destroy(self):
        """Undo every registration (used by tests)."""
        for op, key in self._registrations:
            deregister_kernel(op, key)
        for key in self._fallbacks:
            deregister_fallback(key)
        for op in self._defined:
            REGISTRY.pop(op.qualname, None)
            packet = NAMESPACES[op.namespace]._packets.get(op.schema.name)
            if packet is not None:
                packet._overloads.pop(op.schema.overload or "default", None)
        self._registrations, self._fallbacks, self._defined = [], [], []
        _defined_namespaces.discard(self.ns)


_keepalive = []


def define(qualname: str, schema: str, *, lib=None, tags=()):
    """``define("mylib::foo", "(Tensor x) -> Tensor")``."""
    ns, name = qualname.split("::")
    lib = lib or _fragment(ns)
    lib.define(name + schema, tags=tags)


def impl(qualname: str, types, func=None, *, lib=None):
    """Register a kernel for a device type ("cpu") or dispatch key; usable as a decorator."""
    ns = qualname.split("::")[0]
    keys = [types] if isinstance(types, str) else list(types)
    keys = [_DEVICE_TO_KEY.get(t, t) for t in keys]

    def register(f):
        library = lib or _fragment(ns)
        for key in keys:
            library.impl(qualname, f, key)
        return f

    return register(func) if func is not None else register


def register_fake(qualname: str, func=None, *, lib=None):
    """The meta ("fake") kernel: computes output metadata from metadata only."""
    return impl(qualname, "Meta", func, lib=lib)


_DEVICE_TO_KEY = {"cpu": "CPU", "meta": "Meta", "default": "CompositeExplicitAutograd"}


def _fragment(ns):
    lib = Library(ns, "FRAGMENT")
    _keepalive.append(lib)
    return lib
