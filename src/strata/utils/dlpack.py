"""``strata.utils.dlpack``: DLPack capsules to and from other libraries (NumPy, PyTorch, JAX),
sharing memory; CPU tensors only."""

import enum

from ..tensor_new import from_dlpack  # noqa: F401  (re-exported, as torch.utils.dlpack's)


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (``dlpack.h``), as ``torch.utils.dlpack.DLDeviceType``."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """A legacy DLPack capsule (``"dltensor"``) over ``tensor``'s memory, which a consumer's
    ``from_dlpack`` takes once; as PyTorch's, a tensor that requires grad is exported too."""
    return tensor.detach().__dlpack__()
