"""The ``weights_only`` unpickler: a pickle may name only what a state dict needs
(``torch/_weights_only_unpickler.py``).

Allowed by default: primitive containers, ``OrderedDict`` / ``Counter``, strata's dtypes, devices
and ``Size``, and the tensor rebuild functions of each file format. Nothing that builds a Module or
calls a function: a file naming ``strata.nn.Linear`` is refused before anything is built, as
PyTorch refuses ``torch.nn.Linear``. Users allow more with ``add_safe_globals`` or the
``safe_globals`` context manager (PyTorch's names and wording).
"""

import _compat_pickle
import pickle
from collections import Counter, OrderedDict
from contextlib import contextmanager

from ..core import dtype as D
from ..core.device import device as Device
from ..core.shape import Size

_safe_globals = []


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or ``(obj, "module.name")`` pairs) in weights-only loads.

        strata.serialization.add_safe_globals([MyConfig])
    """
    _safe_globals.extend(safe_globals)


def clear_safe_globals():
    """Forget everything ``add_safe_globals`` allowed."""
    _safe_globals.clear()


def get_safe_globals():
    """What ``add_safe_globals`` allowed, in order."""
    return list(_safe_globals)


@contextmanager
def safe_globals(safe_globals):
    """``with strata.serialization.safe_globals([nn.Linear]): strata.load(f)``."""
    added = list(safe_globals)
    _safe_globals.extend(added)
    try:
        yield
    finally:
        for g in added:
            _safe_globals.remove(g)


def _global_name(g):
    if isinstance(g, tuple):
        return g[1]
    return f"{g.__module__}.{g.__qualname__}"


def _user_allowed():
    return {_global_name(g): (g[0] if isinstance(g, tuple) else g) for g in _safe_globals}


# What any state dict may hold, whatever the format.
COMMON_SAFE = {
    "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
    "builtins.set": set, "builtins.frozenset": frozenset, "builtins.complex": complex,
    "builtins.slice": slice, "builtins.bytearray": bytearray,
}
# strata's own pickles (the safetensors format's pickle mode) name these.
STRATA_SAFE = {
    "strata.core.dtype._by_name": D._by_name, "strata.core.device.device": Device,
    "strata.core.shape.Size": Size,
}

WEIGHTS_ONLY_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, do "
    "those steps only if you trust the source of the checkpoint.\n"
    "\t(1) Re-running `strata.load` with `weights_only` set to `False` will likely succeed, but "
    "it can result in arbitrary code execution. Do it only if you got the file from a trusted "
    "source.\n"
    "\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in "
    "the following error message.\n"
    "\tWeightsUnpickler error: ")


def refusal(what):
    """PyTorch's error (its class and wording) for something the allow-list does not admit."""
    return pickle.UnpicklingError(f"{WEIGHTS_ONLY_HINT}{what}")


def is_refusal(error):
    """A refusal, as opposed to a malformed pickle (which ``load`` reports as corruption)."""
    return isinstance(error, pickle.UnpicklingError) and str(error).startswith(WEIGHTS_ONLY_HINT)


class RestrictedUnpickler(pickle.Unpickler):
    """Resolves only names in ``allowed`` (``"module.name" -> object``) or allowed by the user;
    ``persistent_load`` is the caller's (tensors come from outside the pickle)."""

    def __init__(self, file, allowed, persistent_load):
        super().__init__(file)
        self._allowed = {**allowed, **_user_allowed()}
        self._persistent_load = persistent_load

    def find_class(self, module, name):
        # Protocol 2 writes Python 2 names (__builtin__.set); map them as pickle's own does.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        obj = self._allowed.get(f"{module}.{name}")
        if obj is None:
            raise refusal(
                f"Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
                f"default. Please use `strata.serialization.add_safe_globals([{module}.{name}])` "
                f"or the `strata.serialization.safe_globals([{module}.{name}])` context manager "
                f"to allowlist this global if you trust this class/function.")
        return obj

    def persistent_load(self, pid):
        return self._persistent_load(pid)
