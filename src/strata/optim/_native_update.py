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


def _usable(tensors, *scalars):
    """The tensors' arrays where the kernel may run on them (module docstring), else None."""
    state = dispatch_state()
    if state.mode_stack or state.inference_mode or is_grad_enabled() \
            or not all(type(v) in (int, float) for v in scalars):
        return None   # (with grad enabled, the ops record or refuse the in-place writes)
    arrays = _arrays(tensors)
    if arrays is None or INFERENCE_VERSION in [t._version_counter() for t in tensors]:
        return None
    return arrays


def _launch(kernel, arrays, scalars, *flags):
    fn = native.function("eager_optim", f"{kernel}_{arrays[0].dtype.name}")
    if fn is None:
        return False
    values = np.array(scalars, arrays[0].dtype)    # as the ops convert a Python number
    pointers = [a.ctypes.data for a in arrays] + [values.ctypes.data, *flags]
    n = arrays[0].size
    parallel_for(0, n, native.GENERATED_GRAIN, lambda lo, hi: fn(*pointers, n, lo, hi))
    return True


def _bump(tensors, counts):
    for t, count in zip(tensors, counts):
        t._version_counter().value += count


def sgd_momentum_step(param, grad, buf, momentum, dampening, lr, nesterov):
    """SGD's update with an existing momentum buffer, in place, as ``SGD._update``'s ops compute
    it; False where the caller must run the ops instead."""
    arrays = _usable((param, grad, buf), momentum, dampening, lr)
    if arrays is None or not _launch("sgd_momentum_step", arrays,
                                     (momentum, 1 - dampening, -lr), int(bool(nesterov))):
        return False
    _bump((param, buf), (1, 2))    # add_; mul_ and add_
    return True


def adam_step(param, grad, exp_avg, exp_avg_sq, lerp_weight, beta2, bias_correction2_sqrt,
              eps, step_size):
    """Adam's update of ``param`` and its state in place, as ``Adam._update``'s ops compute it
    (lerp weight below 0.5, no amsgrad); False where the caller must run the ops instead."""
    if not abs(lerp_weight) < 0.5:
        return False
    arrays = _usable((param, grad, exp_avg, exp_avg_sq), beta2, eps, step_size)
    scalars = (lerp_weight, beta2, 1 - beta2, bias_correction2_sqrt, eps, -step_size)
    if arrays is None or not _launch("adam_step", arrays, scalars):
        return False
    _bump((param, exp_avg, exp_avg_sq), (1, 1, 2))   # addcdiv_; lerp_; mul_ and addcmul_
    return True
