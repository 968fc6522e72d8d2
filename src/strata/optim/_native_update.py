"""Optimizer updates as one generated C loop on CPU arrays (compile/inductor/eager_optim.py).

The op path of an update (optim/adam.py's ``_update``) stays the definition; this runs the same
arithmetic in one pass where it can be exact and unobserved: CPU tensors with NumPy arrays of
one float dtype, contiguous and the same size (a parameter or a flat bucket), with grad mode off
(as ``step`` runs), outside inference mode and with no dispatch mode watching the ops (a mode
must see them). The version
counters move as the ops would move them, so autograd still notices a saved parameter that the
step overwrote. Anywhere else the caller runs its ops.

A device with fused updates of its own registers them (``register_device_update``: the opencl
device's are compile/inductor/opencl_optim.py); they run under the same conditions, on the
device's tensors.
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


_DEVICE_UPDATES = {}    # (device type, update name) -> fn(tensors, scalars, *flags) -> bool


def register_device_update(device_type, name, fn):
    """Run ``fn`` instead of the ops of update ``name`` ("adam_step", "sgd_momentum_step") on
    ``device_type``'s tensors; it returns False where it cannot (the ops run)."""
    _DEVICE_UPDATES[device_type, name] = fn


def has_device_update(device_type, name) -> bool:
    return (device_type, name) in _DEVICE_UPDATES


def _unobserved(tensors, *scalars):
    """True where no one can see the ops a fused update skips (module docstring)."""
    state = dispatch_state()
    # (with grad enabled, the ops record or refuse the in-place writes)
    return not (state.mode_stack or state.inference_mode or is_grad_enabled()
                or not all(type(v) in (int, float) for v in scalars)
                or INFERENCE_VERSION in [t._version_counter() for t in tensors])


def _usable(tensors, *scalars):
    """The tensors' arrays where the kernel may run on them (module docstring), else None."""
    if not _unobserved(tensors, *scalars):
        return None
    return _arrays(tensors)


def _run(kernel, tensors, scalars, checked, *flags):
    """Run update ``kernel``: a device's own, or the generated C on CPU arrays."""
    device_update = _DEVICE_UPDATES.get((tensors[0].device.type, kernel))
    if device_update is not None:
        return _unobserved(tensors, *checked) and device_update(tensors, scalars, *flags)
    arrays = _usable(tensors, *checked)
    return arrays is not None and _launch(kernel, arrays, scalars, *flags)


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
    if not _run("sgd_momentum_step", (param, grad, buf), (momentum, 1 - dampening, -lr),
                (momentum, dampening, lr), int(bool(nesterov))):
        return False
    _bump((param, buf), (1, 2))    # add_; mul_ and add_
    return True


def adam_step(param, grad, exp_avg, exp_avg_sq, lerp_weight, beta2, bias_correction2_sqrt,
              eps, step_size):
    """Adam's update of ``param`` and its state in place, as ``Adam._update``'s ops compute it
    (lerp weight below 0.5, no amsgrad); False where the caller must run the ops instead."""
    if not abs(lerp_weight) < 0.5:
        return False
    scalars = (lerp_weight, beta2, 1 - beta2, bias_correction2_sqrt, eps, -step_size)
    if not _run("adam_step", (param, grad, exp_avg, exp_avg_sq), scalars,
                (beta2, eps, step_size)):
        return False
    _bump((param, exp_avg, exp_avg_sq), (1, 1, 2))   # addcdiv_; lerp_; mul_ and addcmul_
    return True


def adamw_step(param, grad, exp_avg, exp_avg_sq, lerp_weight, beta2, bias_correction2_sqrt,
               eps, step_size, decay):
    """``param.mul_(decay)`` (decoupled weight decay) then ``adam_step``, as one device update
    where the device has one ("adamw_step": opencl); False where the caller runs them apart."""
    if not (abs(lerp_weight) < 0.5 and has_device_update(param.device.type, "adamw_step")):
        return False
    scalars = (lerp_weight, beta2, 1 - beta2, bias_correction2_sqrt, eps, -step_size, decay)
    if not _run("adamw_step", (param, grad, exp_avg, exp_avg_sq), scalars,
                (beta2, eps, step_size, decay)):
        return False
    _bump((param, exp_avg, exp_avg_sq), (2, 1, 2))   # mul_ and addcdiv_; lerp_; mul_, addcmul_
    return True
