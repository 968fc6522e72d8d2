"""``Optimizer``: parameter groups, per-parameter state, state dicts and step hooks.

Observable behaviour follows ``torch/optim/optimizer.py``: ``param_groups`` is a list of dicts with
every default filled in, ``state`` is a ``defaultdict(dict)`` keyed by the parameter tensor and
filled lazily on the first ``step()``, and ``state_dict()`` replaces parameters by integer ids
numbered through all groups in order, so a strata state dict has the structure of PyTorch's.

    opt = strata.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad(); loss.backward(); opt.step()
"""

import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..core import dtype as D
from ..dispatch.tls import is_compiling
from ..nn.modules.hooks import RemovableHandle
from ..ops import factory as F
from ..ops import pointwise as P

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


class _RequiredParameter:
    """Marks a default the user must give (``required``), as PyTorch's optimizers do."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook):
    """A hook ``hook(optimizer, args, kwargs)`` run before every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """A hook ``hook(optimizer, args, kwargs)`` run after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _use_grad_for_differentiable(step):
    """Run ``step`` with grad mode off, unless the optimizer was built ``differentiable=True``
    (then autograd records the update, as PyTorch's ``_use_grad_for_differentiable``)."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with set_grad_enabled(self.defaults["differentiable"]):
            return step(self, *args, **kwargs)
    return wrapper


def _evaluate_closure(closure):
    """A closure re-evaluates the model, so it runs with grad mode on."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _to_scalar(x):
    """A 1-element tensor hyperparameter (``lr=strata.tensor(0.1)``) as a Python number."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _lr(group):
    """The group's learning rate: a Python number, except a tensor ``lr`` while compiling (Note
    [Traced optimizer step]), which stays a float64 0-dim tensor: a graph input, so that a
    scheduler's new value needs no recompile (PyTorch's advice for compiled optimizers). Both
    hold the same double, the float32 value of the tensor."""
    lr = group["lr"]
    if isinstance(lr, Tensor) and is_compiling():
        return lr.to(D.float64)
    return _to_scalar(lr)


def _negative(value):
    """``-value`` of a Python number or of a traced 0-dim tensor (``_lr``, bias corrections)."""
    return P.neg(value) if isinstance(value, Tensor) else -value


def _step_along_(param, direction, lr):
    """``param.add_(direction, alpha=-lr)``; a traced tensor ``lr`` rounds as that does:
    ``direction * float32(-lr)``, then the sum."""
    if isinstance(lr, Tensor):
        return param.add_(P.mul(direction, P.neg(lr)))
    return param.add_(direction, alpha=-lr)


def _get_scalar_dtype():
    """``state['step']`` is float32 unless the default dtype is float64 (PyTorch's rule)."""
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def _new_step():
    """A fresh ``state['step']``: a 0-dim CPU tensor, as PyTorch 2.x keeps it."""
    return F.scalar_tensor(0.0, dtype=_get_scalar_dtype())


def _scalar_from_number(value):
    """A scalar state (``step``, NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``) as the 0-dim
    tensor PyTorch keeps; old checkpoints stored a number, which is upgraded on load."""
    return F.scalar_tensor(float(value), dtype=_get_scalar_dtype())


# Note [Traced optimizer step]: inside ``strata.compile`` (``is_compiling()``, which capture folds
# to True) ``step`` takes a path the capture can record as one graph, as PyTorch's optimizers do
# under Dynamo: the per-parameter loop (the compiler fuses; flat buckets would add copies), no
# fused native update (it reads arrays), and the step count kept as a tensor, with tensor bias
# corrections instead of ``.item()``. The update's numbers are eager's bit for bit
# (docs/compiled_optimizer.md); the eager path is unchanged.
def _double(value):
    """A float64 0-dim tensor holding the Python float ``value`` (traced scalar math)."""
    return F.scalar_tensor(value, dtype=D.float64)


def _power(base, exponent):
    """``base ** exponent`` of Python floats, or of traced float64 0-dim tensors (a float
    operand becomes one): libm's ``pow`` either way."""
    if isinstance(base, Tensor) or isinstance(exponent, Tensor):
        return P.pow(*(x if isinstance(x, Tensor) else _double(x) for x in (base, exponent)))
    return base ** exponent


def _step_count(step):
    """The step count ``t`` of ``state['step']``: its Python value in eager, the tensor itself
    while compiling (Note [Traced optimizer step]: no ``.item()``)."""
    return step if is_compiling() else _scalar_value(step)


def _bias_corrected_lr(step, lr, beta1):
    """``lr / (1 - beta1^t)`` (Adam's step size, Adamax's) for ``t = _step_count(...)``: a
    Python float, or for a traced step a float64 0-dim tensor by the same IEEE operations."""
    if not isinstance(step, Tensor):
        return lr / (1 - beta1 ** step)
    lr = lr if isinstance(lr, Tensor) else _double(lr)
    return P.div(lr, P.sub(_double(1.0), P.pow(_double(beta1), step.to(D.float64))))


def _adam_bias_corrections(step, lr, beta1, beta2):
    """``(lr / (1 - beta1^t), (1 - beta2^t) ** 0.5)`` for the step count ``t``.

    Eager: Python floats from the step's value. While compiling (Note [Traced optimizer step])
    the step stays a tensor and they are float64 0-dim tensors made by the same IEEE operations
    (``pow``, then ``- `` and ``/``), so the compiled update converts the same doubles to the
    parameter's dtype as eager's Python numbers and gives eager's bits."""
    step = _step_count(step)
    if not isinstance(step, Tensor):
        return _bias_corrected_lr(step, lr, beta1), (1 - beta2 ** step) ** 0.5
    bias_correction2 = P.sub(_double(1.0), P.pow(_double(beta2), step.to(D.float64)))
    return _bias_corrected_lr(step, lr, beta1), P.pow(bias_correction2, _double(0.5))


def _scalar_value(state_tensor):
    """The value of a scalar state: one parameter's 0-dim tensor, or a bucket's flat vector of
    equal values (see ``_multi_tensor.FlatBucket.uniform``)."""
    return (state_tensor if state_tensor.ndim == 0 else state_tensor[0]).item()


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_nonnegative(**values):
    """``ValueError('Invalid <name> value: <v>')`` for the first negative value, checked in the
    order given (PyTorch's); ``eps`` is called "epsilon" there."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {'epsilon' if name == 'eps' else name} value: {value}")


def _check_adam_args(lr, betas, eps, weight_decay):
    """The checks Adam, AdamW, NAdam, RAdam and Adamax make, in PyTorch's order and wording."""
    _check_lr(lr)
    _check_nonnegative(eps=eps)
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    _check_nonnegative(weight_decay=weight_decay)


# PyTorch's fused pointwise kernels, written as their elementwise steps in the CPU kernel's own
# order (so the numbers match PyTorch's), in place on one fresh temporary each.
def _lerp_(start, end, weight):
    """``start.lerp_(end, weight)``: from whichever end is nearer, as the kernel does. A traced
    float64 0-dim ``weight`` (Note [Traced optimizer step]) computes both ends and selects."""
    if isinstance(weight, Tensor):
        near_start = P.add(start, P.sub(end, start).mul_(weight))
        near_end = P.sub(end, P.sub(end, start).mul_(1 - weight))
        return start.copy_(P.where(P.lt(P.abs(weight), 0.5), near_start, near_end))
    if abs(weight) < 0.5:
        return start.add_(P.sub(end, start).mul_(weight))
    return start.copy_(P.sub(end, P.sub(end, start).mul_(1 - weight)))


def _addcmul_(target, tensor1, tensor2, value):
    """``target.addcmul_(tensor1, tensor2, value=value)``: target + (value·t1)·t2."""
    return target.add_(P.mul(tensor1, value).mul_(tensor2))


def _addcdiv_(target, tensor1, tensor2, value):
    """``target.addcdiv_(tensor1, tensor2, value=value)``: target + (value·t1)/t2."""
    return target.add_(P.mul(tensor1, value).div_(tensor2))


def _type_name(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


# Note [Fused optimizers]: ``fused=True`` (Adam, AdamW, SGD, Adagrad) asks PyTorch for one kernel
# per group (``torch._fused_adam_``). strata's updates already run as one generated C loop per
# group where the device has one (optim/_native_update.py), so ``fused`` selects nothing new:
# it is accepted with PyTorch's checks (not with ``foreach=True`` or ``differentiable``; at
# the step, only floating-point parameters on a device listed here).
FUSED_DEVICES = ["cpu", "sim", "opencl"]


def _check_fused_or_capturable(name, defaults):
    """PyTorch's construction checks of ``fused``; graph capture is refused (strata has none)."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if defaults.get("capturable", False):
        raise RuntimeError(f"{name}: `capturable=True` is not supported by strata (it needs "
                           f"graph capture on an accelerator)")


def check_fused_params(params):
    """PyTorch's step-time check of a ``fused=True`` group (``_device_dtype_check_for_fused``)."""
    for p in params:
        if not (p.device.type in FUSED_DEVICES and p.dtype.is_floating_point):
            raise RuntimeError("`fused=True` requires all the params to be floating point "
                               f"Tensors of supported devices: {FUSED_DEVICES} but {p.dtype} "
                               f"and {p.device.type}")


def _hooked_step(step):
    """Wrap a subclass's ``step`` so global and per-optimizer step hooks run around it."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for pre_hook in itertools.chain(_global_optimizer_pre_hooks.values(),
                                        self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        out = step(self, *args, **kwargs)
        for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                         _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of every optimizer: holds ``param_groups``, ``state`` and ``defaults``."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _type_name(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def _patch_step_function(self):
        # As PyTorch, the class's own `step` is wrapped once, on first construction.
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _hooked_step(cls.step)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # --- hooks ----------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _register(hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    # --- state dicts ----------------------------------------------------------------------------
    def state_dict(self):
        """``{'state': {id: {...}}, 'param_groups': [{..., 'params': [ids]}]}``; the state
        tensors are the live ones (not copies), as in PyTorch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, key):
        # `step` keeps its own dtype (pytorch#74424); floating state follows the parameter.
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()``: parameters are matched to the saved ids by order."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                return self._process_value_according_to_param_policy(param, value, key)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # --- gradients and groups -------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Drop every parameter's ``.grad`` (or zero it in place with ``set_to_none=False``)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError(  # by design: an abstract method, as in PyTorch
            f"{type(self).__name__} must implement step() (Optimizer is a base class)")

    def add_param_group(self, param_group):
        """Add a group (a dict with ``'params'``); missing options come from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. Please "
                            "use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _type_name(param))
            if not self.defaults.get("differentiable", None) and not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
