"""Plugging a new device into strata from Python, as ``torch.utils.backend_registration``.

    strata.utils.rename_privateuse1_backend("foo")     # "foo" is now a device string
    lib = strata.library.Library("aten", "IMPL")
    lib.impl("empty.memory_format", my_empty, "PrivateUse1")
    lib.impl("add.Tensor", my_add, "PrivateUse1")
    x = strata.empty(3, device="foo")

Kernels registered under ``PrivateUse1`` run for tensors on the device; ``tensor_from_array`` and
``array_of`` let a host-memory device keep its data in NumPy arrays (a real accelerator backend
would implement storage in its own runtime instead, as ``backends/sim`` does).
"""

import numpy as np

from ..core.device import as_device, register_device_type
from ..dispatch.keys import backend_keyset
from .._tensor import from_array

_renamed = []


def rename_privateuse1_backend(backend_name: str) -> None:
    """Make ``backend_name`` the device type of the PrivateUse1 dispatch key (once per process)."""
    if _renamed and _renamed[0] != backend_name:
        raise RuntimeError(f"torch.register_privateuse1_backend() has already been set! Current "
                           f"backend: {_renamed[0]}")
    register_device_type(backend_name, "PrivateUse1")
    if not _renamed:
        _renamed.append(backend_name)


def tensor_from_array(arr: np.ndarray, device):
    """A tensor on a PrivateUse1 device whose storage is ``arr`` (which it takes ownership of)."""
    d = as_device(device)
    return from_array(np.ascontiguousarray(arr), device=d, keyset=backend_keyset("PrivateUse1"))


def array_of(tensor) -> np.ndarray:
    """The NumPy view of a host-memory device tensor's elements."""
    return tensor._np()
