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
device's tensors. A device may also update every parameter of a group at once
(``register_device_group_update``; ``adam_group_step``, ``sgd_momentum_group_step``), as
torch's ``_fused_adam_`` does: one launch instead of one per parameter, the same arithmetic.
"""

import numpy as np

from ..autograd.grad_mode import is_grad_enabled
from ..backends.cpu import native, native_pool
from ..backends.cpu.array import data
from ..core import dtype as D
from ..core.tensor_impl import INFERENCE_VERSION
from ..dispatch.tls import is_compiling
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


_DEVICE_GROUP_UPDATES = {}   # (device type, update name) -> hook: .plan(lists, kept), (plan, ...)


def register_device_group_update(device_type, name, hook):
    """Update a whole group's parameters with ``hook`` on ``device_type``:
    ``hook.plan(lists, kept)`` works out, with no side effect on the tensors, how it updates
    ``lists`` (one list per tensor of update ``name``: params, grads, then the state, one entry
    per parameter), or returns None where it cannot (``kept``: a dict the optimizer keeps for
    the group, where the hook may keep what it checked); ``hook(plan, scalars, *flags)``
    updates them all with one set of scalars."""
    _DEVICE_GROUP_UPDATES[device_type, name] = hook


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
    native_pool.parallel_call(fn, pointers + [n], 0, n, native.GENERATED_GRAIN)
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


def _adam_scalars(lerp_weight, beta2, bias_correction2_sqrt, eps, step_size):
    """The scalars of the Adam kernels, in eager_optim.py's order."""
    return (lerp_weight, beta2, 1 - beta2, bias_correction2_sqrt, eps, -step_size)


def adam_step(param, grad, exp_avg, exp_avg_sq, lerp_weight, beta2, bias_correction2_sqrt,
              eps, step_size):
    """Adam's update of ``param`` and its state in place, as ``Adam._update``'s ops compute it
    (lerp weight below 0.5, no amsgrad); False where the caller must run the ops instead."""
    if not abs(lerp_weight) < 0.5:
        return False
    scalars = _adam_scalars(lerp_weight, beta2, bias_correction2_sqrt, eps, step_size)
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
    scalars = (*_adam_scalars(lerp_weight, beta2, bias_correction2_sqrt, eps, step_size), decay)
    if not _run("adamw_step", (param, grad, exp_avg, exp_avg_sq), scalars,
                (beta2, eps, step_size, decay)):
        return False
    _bump((param, exp_avg, exp_avg_sq), (2, 1, 2))   # mul_ and addcdiv_; lerp_; mul_, addcmul_
    return True


# --- whole groups --------------------------------------------------------------------------------

def _group_plans(update, lists, checked, steps=None, kept=None):
    """[(parameter indices, the device's plan for them)] where the device's multi-tensor
    ``update`` can take ``lists`` unobserved, else None: one entry per distinct count in
    ``steps`` (parameters that skipped steps have their own bias corrections), or one for
    all; and the device's hook. ``kept``: the caller's dict for the hook's checks kept
    between steps."""
    hook = _DEVICE_GROUP_UPDATES.get((lists[0][0].device.type, update)) if lists[0] else None
    if hook is None or is_compiling() or \
            not _unobserved([t for tensors in lists for t in tensors], *checked):
        return None, None
    batches = {}
    for i, step in enumerate(steps or ()):
        batches.setdefault(step.item(), []).append(i)
    if len(batches) <= 1:
        plan = hook.plan(lists, kept)
        return (None if plan is None else [(range(len(lists[0])), plan)]), hook
    plans = []
    for members in batches.values():
        plan = hook.plan([[tensors[i] for i in members] for tensors in lists], kept)
        if plan is None:
            return None, None
        plans.append((members, plan))
    return plans, hook


def count_steps(steps):
    """``step.add_(1)`` for each optimizer step count; a float 0-dim CPU tensor (as PyTorch
    keeps it) is counted in its array with its version moved, as the op would (the callers
    run with nothing observing the ops: ``_unobserved``)."""
    for step in steps:
        if step.device.type == "cpu" and step.ndim == 0 and \
                step.dtype in (D.float32, D.float64) and \
                step._version_counter() is not INFERENCE_VERSION:
            array = data(step)
            array += 1
            step._version_counter().value += 1
        else:
            step.add_(1)


def adam_group_step(params, grads, exp_avgs, exp_avg_sqs, steps, corrections, lerp_weight,
                    beta2, eps, lr, decay=None, kept=None):
    """Count each of ``steps`` up by one, then Adam's update (AdamW's, ``param.mul_(decay)``
    first, with ``decay``) of every parameter in place, as ``adam_step``/``adamw_step`` compute
    it, with one device launch per distinct step count; ``corrections(i)`` gives parameter
    ``i``'s (step size, sqrt of bias correction 2) once its step is counted (the same for
    every parameter at the same step). False, with nothing done, where the device has no
    multi-tensor update for them: the caller loops."""
    update = "adam_step" if decay is None else "adamw_step"
    lists = (params, grads, exp_avgs, exp_avg_sqs)
    checked = (beta2, eps, lr) + (() if decay is None else (decay,))
    if not abs(lerp_weight) < 0.5:
        return False
    plans, hook = _group_plans(update, lists, checked, steps, kept)
    if plans is None:
        return False
    count_steps(steps)
    for members, plan in plans:
        step_size, bias_correction2_sqrt = corrections(members[0])
        scalars = _adam_scalars(lerp_weight, beta2, bias_correction2_sqrt, eps, step_size)
        hook(plan, scalars if decay is None else (*scalars, decay))
    _bump_lists(lists, (1 if decay is None else 2, 0, 1, 2))
    return True


def sgd_momentum_group_step(params, grads, bufs, momentum, dampening, lr, nesterov,
                            kept=None):
    """``sgd_momentum_step`` of every parameter, with one device launch; False, with nothing
    done, where the device has no multi-tensor update for them: the caller loops."""
    lists = (params, grads, bufs)
    plans, hook = _group_plans("sgd_momentum_step", lists, (momentum, dampening, lr),
                               kept=kept)
    if plans is None:
        return False
    hook(plans[0][1], (momentum, 1 - dampening, -lr), int(bool(nesterov)))
    _bump_lists(lists, (1, 0, 2))
    return True


def _bump_lists(lists, counts):
    for tensors, count in zip(lists, counts):
        _bump(tensors, (count,) * len(tensors))
