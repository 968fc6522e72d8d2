"""Make ``import torch`` (and every ``torch.*`` submodule) resolve to strata.

``strata run script.py`` installs this finder before running an unmodified PyTorch script. A
submodule strata does not have raises ModuleNotFoundError naming both the torch module and the
strata module it was looked up as.
"""

import importlib
import importlib.abc
import importlib.util
import sys


class TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
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
