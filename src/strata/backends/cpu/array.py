"""How CPU kernels see tensors: as NumPy arrays, and back.

* ``data(x)``: the NumPy view of a tensor (a Python scalar passes through unchanged).
* ``wrap(arr, dtype)``: a new tensor that owns a kernel's fresh result array.
* Half-precision floats compute in float32 and round once at the end, as PyTorch's CPU kernels
  do (their "opmath" type), so results match bit for bit.
"""

import warnings

import numpy as np

from ...core import dtype as D
from ...core.tensor_impl import TensorImpl
from ..._tensor import from_array

# NumPy reports inf/nan arithmetic through the warnings module, attributed to the calling
# module. PyTorch is silent about IEEE results (1/0 = inf), so silence them in CPU kernels only.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"strata\.backends\.cpu")

COMPUTE = {d: (np.dtype(np.float32) if d in (D.float16, D.bfloat16) else d.np)
           for d in D.ALL_DTYPES}


def data(x):
    if isinstance(x, TensorImpl):
        arr = x._array
        return arr if arr is not None else x._np()
    return x


def compute_data(x, dt):
    """``x`` as an array (or scalar) in the compute dtype of result dtype ``dt``."""
    if isinstance(x, TensorImpl):
        arr = x._array
        if arr is None:
            arr = x._np()
        cdt = COMPUTE[dt]
        return arr if arr.dtype == cdt else arr.astype(cdt)
    return x


def wrap(arr, dt):
    """A tensor of dtype ``dt`` owning ``arr`` (a fresh kernel result)."""
    if type(arr) is not np.ndarray:
        arr = np.asarray(arr)
    if arr.dtype != dt.np:
        arr = arr.astype(dt.np)
    elif arr.base is not None and not arr.flags.owndata:
        arr = arr.copy()
    return from_array(arr, dt)


def write(self, result):
    """Copy a result array into ``self`` (an in-place op's last step) and return ``self``."""
    np.copyto(data(self), result, casting="unsafe")
    return self
