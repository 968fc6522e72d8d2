"""Optimizer updates as one generated C loop on CPU arrays (compile/inductor/eager_optim.py).

The op path of an update (optim/adam.py's ``_update``) stays the definition; this runs the same
arithmetic in one pass where it can be exact and unobserved: CPU tensors with NumPy arrays of
one float dtype, contiguous and the same size (a parameter or a flat bucket), with grad mode off
(as ``step`` runs), outside inference mode and with no dispatch mode watching the ops (a mode
must see them). The version
counters move as the ops would move them, so autograd still notices a saved parameter that the
step overwrote. Anywhere else the caller runs its ops.
"""

import numpy as np

from ..autograd.grad_mode import is_grad_enabled
from ..backends.cpu import native
from ..backends.cpu.array import data, parallel_for
from ..core.tensor_impl import INFERENCE_VERSION
from ..dispatch.tls import state as dispatch_state


def _arrays(tensors):
    """The tensors' NumPy arrays if they qualify (see the module docstring), else None."""
    arrays = []
    for t in tensors:
        if t.device.type != "cpu" or t.is_sparse:
            return None
        a = data(t)
        if a.dtype not in native.GENERATED_DTYPES or not a.flags.c_contiguous:
            return None
        arrays.append(a)
    first = arrays[0]
    if any(a.dtype != first.dtype or a.size != first.size for a in arrays):
        return None
    return arrays


def adam_step(param, grad, exp_avg, exp_avg_sq, lerp_weight, beta2, bias_correction2_sqrt,
              eps, step_size):
    """Adam's update of ``param`` and its state in place, as ``Adam._update``'s ops compute it
    (lerp weight below 0.5, no amsgrad); False where the caller must run the ops instead."""
    if not abs(lerp_weight) < 0.5:
        return False
    state = dispatch_state()
    if state.mode_stack or state.inference_mode or is_grad_enabled() \
            or not all(type(v) in (int, float) for v in (beta2, eps, step_size)):
        return False   # (with grad enabled, the ops record or refuse the in-place writes)
    arrays = _arrays((param, grad, exp_avg, exp_avg_sq))
    if arrays is None:
        return False
    written = [t._version_counter() for t in (param, exp_avg, exp_avg_sq)]
    if INFERENCE_VERSION in written:
        return False
    fn = native.function("eager_optim", f"adam_step_{arrays[0].dtype.name}")
    if fn is None:
        return False
    scalars = np.array([lerp_weight, beta2, 1 - beta2, bias_correction2_sqrt, eps, -step_size],
                       arrays[0].dtype)
    pointers = [a.ctypes.data for a in arrays] + [scalars.ctypes.data]
    n = arrays[0].size
    parallel_for(0, n, native.GENERATED_GRAIN, lambda lo, hi: fn(*pointers, n, lo, hi))
    for counter, bumps in zip(written, (1, 1, 2)):   # addcdiv_; lerp_; mul_ and addcmul_
        counter.value += bumps
    return True
