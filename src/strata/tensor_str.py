"""How tensors print (placeholder formatting; replaced by the PyTorch-exact printer)."""

import numpy as np


def tensor_repr(t):
    if t.device.type == "meta":
        return f"tensor(..., device='meta', size={tuple(t.shape)}, dtype={t.dtype})"
    arr = np.asarray(t.detach().cpu()._np())
    return f"tensor({np.array2string(arr, separator=', ')}, dtype={t.dtype})"
