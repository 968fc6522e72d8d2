"""Dispatch keys and key sets, laid out as PyTorch's ``c10/core/DispatchKeySet.h``.

A ``DispatchKeySet`` is a plain ``int`` bit mask (fast to OR and to cache on). The low bits are
*backend components* (CPU, Sim, OpenCL, PrivateUse1, Meta — Meta last so it wins); the high bits
are *functionalities* in priority order (a higher bit runs first). Some functionalities are
*per-backend* (Dense, Sparse, Autograd): one bit in the set, one runtime key per backend, chosen
by the highest backend bit — so ``{Autograd, CPU}`` means ``AutogradCPU``.

    >>> from strata.dispatch.keys import DispatchKey, keyset_of, highest_key
    >>> highest_key(keyset_of(DispatchKey.AutogradCPU, DispatchKey.CPU))
    <DispatchKey.AutogradCPU>
"""

BACKENDS = ("CPU", "Sim", "OpenCL", "PrivateUse1", "Meta")
NB = len(BACKENDS)
BACKEND_MASK = (1 << NB) - 1

# Lowest -> highest priority. (name, per_backend, runtime-key prefix)
FUNCTIONALITIES = (
    ("Dense", True, ""),
    ("Sparse", True, "Sparse"),
    ("BackendSelect", False, None),
    ("Python", False, None),
    ("Functionalize", False, None),
    ("ADInplaceOrView", False, None),
    ("Autograd", True, "Autograd"),
    ("AutocastCPU", False, None),
    ("PythonTLSSnapshot", False, None),
    ("PreDispatch", False, None),
)
FUNC_INDEX = {name: i for i, (name, _, _) in enumerate(FUNCTIONALITIES)}


class DispatchKey:
    """A runtime key (``CPU``, ``AutogradCPU``, ``Python``, ...) or an alias key."""

    __slots__ = ("name", "functionality", "backend", "is_alias")

    def __init__(self, name, functionality, backend, is_alias=False):
        self.name = name
        self.functionality = functionality  # index into FUNCTIONALITIES (None for aliases)
        self.backend = backend              # index into BACKENDS, or None
        self.is_alias = is_alias

    def __repr__(self):
        return f"<DispatchKey.{self.name}>"

    def __str__(self):
        return self.name

    @property
    def keyset(self) -> int:
        """The bits this key sets: its functionality bit, plus its backend bit if it has one."""
        bits = 1 << (NB + self.functionality)
        if self.backend is not None:
            bits |= 1 << self.backend
        return bits

    @property
    def priority(self) -> tuple:
        return (self.functionality, -1 if self.backend is None else self.backend)


RUNTIME_KEYS = []          # every non-alias key, lowest priority first
_BY_NAME = {}
_PER_BACKEND = {}           # (functionality, backend) -> key
_SINGLE = {}                # functionality -> key


def _add(key):
    RUNTIME_KEYS.append(key)
    _BY_NAME[key.name] = key
    setattr(DispatchKey, key.name, key)


for _f, (_name, _per_backend, _prefix) in enumerate(FUNCTIONALITIES):
    if _per_backend:
        for _b, _backend in enumerate(BACKENDS):
            _key = DispatchKey(_prefix + _backend, _f, _b)
            _PER_BACKEND[_f, _b] = _key
            _add(_key)
    else:
        _SINGLE[_f] = DispatchKey(_name, _f, None)
        _add(_SINGLE[_f])

# Alias keys: registering to one fills many runtime keys (Note [Alias Dispatch Keys]).
for _alias in ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "Autograd"):
    _key = DispatchKey(_alias, None, None, is_alias=True)
    _BY_NAME[_alias] = _key
    setattr(DispatchKey, _alias, _key)

DENSE = FUNC_INDEX["Dense"]
AUTOGRAD = FUNC_INDEX["Autograd"]
ADINPLACE = FUNC_INDEX["ADInplaceOrView"]
PYTHON = FUNC_INDEX["Python"]


def key_by_name(name: str) -> DispatchKey:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown dispatch key '{name}'; known: "
                         f"{', '.join(_BY_NAME)}") from None


def backend_index(name: str) -> int:
    return BACKENDS.index(name)


def keyset_of(*keys) -> int:
    ks = 0
    for k in keys:
        ks |= k.keyset
    return ks


def functionality_bit(name: str) -> int:
    return 1 << (NB + FUNC_INDEX[name])


def highest_key(ks: int):
    """The runtime key a key set dispatches to (None for an empty set)."""
    funcs = ks >> NB
    if not funcs:
        return None
    f = funcs.bit_length() - 1
    if FUNCTIONALITIES[f][1]:
        backends = ks & BACKEND_MASK
        if not backends:
            return None
        return _PER_BACKEND[f, backends.bit_length() - 1]
    return _SINGLE[f]


def keys_in(ks: int) -> list:
    """The runtime keys in a set, highest priority first (for printing)."""
    out = []
    backends = [b for b in range(NB) if ks >> b & 1]
    for f in range(len(FUNCTIONALITIES) - 1, -1, -1):
        if ks >> (NB + f) & 1:
            if FUNCTIONALITIES[f][1]:
                out.extend(_PER_BACKEND[f, b] for b in reversed(backends))
            else:
                out.append(_SINGLE[f])
    return out


def after(ks: int, key) -> int:
    """``ks`` with ``key``'s functionality and everything above it removed (for redispatch)."""
    return ks & ((1 << (NB + key.functionality)) - 1)


def backend_keyset(backend: str) -> int:
    """The key set a plain dense tensor on this backend carries (PyTorch: backend +
    ADInplaceOrView + Autograd<backend>, whether or not it requires grad)."""
    b = 1 << backend_index(backend)
    return (b | functionality_bit("Dense") | functionality_bit("ADInplaceOrView")
            | functionality_bit("Autograd"))


class DispatchKeySet(int):
    """A printable key set (the dispatcher itself uses plain ints)."""

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in keys_in(self))})"

    def has(self, key) -> bool:
        return (self & key.keyset) == key.keyset
