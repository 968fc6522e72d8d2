"""Make ``import torch`` (and every ``torch.*`` submodule) resolve to strata.

``strata run script.py`` installs this finder before running an unmodified PyTorch script. A
submodule strata does not have raises ModuleNotFoundError naming both the torch module and the
strata module it was looked up as.

Note [Two version numbers]: programs branch on ``torch.__version__`` (``version.parse(
torch.__version__) >= version.parse("2.0")``), so under the alias ``torch`` reports the PyTorch
API level strata implements, ``2.13.0+strata<strata's version>``, and ``torch.version`` exists;
``strata.__version__`` stays strata's own. Both hold because ``torch`` is its own module object:
strata's namespace copied once, with the version attributes of PyTorch's; a name strata gains
later is looked up in strata, and an assignment to ``torch.x`` reaches strata too.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

PYTORCH_API_VERSION = "2.13.0"   # the PyTorch release whose API and error messages strata follows


class TorchVersion(str):
    """A version string that compares as a version with strings and tuples, as PyTorch's
    ``torch.torch_version.TorchVersion``: ``torch.__version__ >= "2.0"``, ``< (2, 14)``."""

    def _as_version(self, other):
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if isinstance(other, Iterable):
            return Version(".".join(str(item) for item in other))
        raise InvalidVersion(other)

    def _compare(self, other, method):
        try:
            return getattr(Version(self), method)(self._as_version(other))
        except InvalidVersion:   # not a version ("parrot"): compare as strings, as PyTorch does
            return getattr(super(), method)(other)


for _method in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):
    setattr(TorchVersion, _method, lambda self, other, method=_method: self._compare(other,
                                                                                     method))


def _version_module(strata):
    """``torch.version``: what PyTorch's generated ``torch/version.py`` holds, for strata."""
    module = types.ModuleType("torch.version", "The PyTorch API level strata implements.")
    module.__version__ = TorchVersion(f"{PYTORCH_API_VERSION}+strata{strata.__version__}")
    own = strata.version
    module.git_version, module.debug = own.git_version, own.debug
    module.cuda, module.hip, module.xpu = own.cuda, own.hip, own.xpu
    module.strata = strata.__version__
    return module


class _TorchModule(types.ModuleType):
    """``torch`` under the alias (Note [Two version numbers])."""

    def __getattr__(self, name):
        return getattr(self.__dict__["_strata"], name)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if not name.startswith("__") and name != "version":   # the import system's and ours
            setattr(self.__dict__["_strata"], name, value)


def _torch_module(strata):
    module = _TorchModule("strata", strata.__doc__)   # ``torch.__name__`` tells it is strata
    namespace = {k: v for k, v in vars(strata).items()
                 if not k.startswith("__") or k in ("__path__", "__file__", "__all__")}
    module.__dict__.update(namespace)
    module.__dict__["_strata"] = strata
    version = _version_module(strata)
    module.__dict__.update(__version__=version.__version__, version=version)
    return module


class TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        if spec.name == "torch":
            return _torch_module(importlib.import_module("strata"))
        if spec.name == "torch.version":   # made with ``torch``, which is imported first
            return sys.modules["torch"].version
        target = "strata" + spec.name[len("torch"):]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name and not target.startswith(e.name):
                raise
            raise ModuleNotFoundError(f"No module named '{spec.name}' (strata does not provide "
                                      f"'{target}')", name=spec.name) from None

    def exec_module(self, module):
        """The strata module is already executed."""


def install():
    """Route ``torch`` imports to strata (idempotent)."""
    if not any(isinstance(f, TorchAliasFinder) for f in sys.meta_path):
        for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
            del sys.modules[name]
        sys.meta_path.insert(0, TorchAliasFinder())
