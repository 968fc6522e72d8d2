"""Pruning (``torch/nn/utils/prune.py``): zero parts of a parameter through a mask.

``l1_unstructured(module, "weight", amount=0.3)`` moves the parameter to ``weight_orig``, adds
the buffer ``weight_mask`` and a forward pre-hook that sets ``module.weight = weight_orig *
weight_mask`` before each call. Pruning the same tensor again combines the masks (a
``PruningContainer`` prunes only what is left); ``remove`` makes the pruned tensor the parameter
again.
"""

import numbers
from abc import ABC, abstractmethod

from ... import creation
from ...autograd.grad_mode import no_grad
from .convert_parameters import parameters_to_vector


class BasePruningMethod(ABC):
    """A pruning method is a forward pre-hook that also computes the mask."""

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t``, given the mask already applied (``default_mask``)."""

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return orig * mask.to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        old_method = None
        found = 0
        for key, hook in list(module._forward_pre_hooks.items()):
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                del module._forward_pre_hooks[key]
                found += 1
        if found > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                                 f"of module {module}. Use a PruningContainer.")
        orig = getattr(module, name)
        if importance_scores is not None and importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter "
                                 f"{name} of {module}")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
            container = old_method if isinstance(old_method, PruningContainer) else \
                PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
        scores = importance_scores if importance_scores is not None else orig
        with no_grad():
            mask = method.compute_mask(scores, default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` pruned (not in place), by ``importance_scores`` if given."""
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else creation.ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruned tensor the parameter again (no mask, no hook)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 f"removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Successive pruning of one tensor: each new method prunes what the others left."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], tuple):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1:
            for method in args[0]:
                self.add_pruning_method(method)
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            keep = mask == 1
            partial = method.compute_mask(t[keep], default_mask=mask[keep])
            mask[keep] = partial.to(dtype=mask.dtype)
            return mask
        if method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have "
                                     "the attribute `dim` defined.")
            dim = method.dim % t.ndim
            others = [d for d in range(t.ndim) if d != dim]
            keep = (mask.sum(dim=others) != 0) if others else mask != 0
            index = (slice(None),) * dim + (keep,)
            partial = method.compute_mask(t[index], default_mask=mask[index])
            mask[index] = partial.to(dtype=mask.dtype)
            return mask
        return method.compute_mask(t, default_mask=mask)   # "global"


class Identity(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or
                                                           float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         f"non-negative integer")


def _count_to_prune(amount, size):
    """How many of ``size`` entries ``amount`` (a count, or a fraction rounded) prunes."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return amount
    return round(amount * size)


class _Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if count != 0:
            lowest = self._scores(t).reshape(-1).topk(count, largest=False).indices
            flat = mask.view(-1)
            flat[lowest] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomUnstructured(_Unstructured):
    def _scores(self, t):
        return creation.rand_like(t)


class L1Unstructured(_Unstructured):
    def _scores(self, t):
        return t.abs()


class _Structured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def compute_mask(self, t, default_mask):
        if t.ndim <= 1:
            raise ValueError(f"Structured pruning can only be applied to multidimensional "
                             f"tensors. Found tensor of shape {tuple(t.shape)} with {t.ndim} "
                             f"dims")
        size = t.shape[self.dim]
        count = _count_to_prune(self.amount, size)
        if count == 0:
            return default_mask
        keep = self._channel_scores(t).topk(size - count, largest=True).indices
        mask = creation.zeros_like(t)
        mask[(slice(None),) * (self.dim % t.ndim) + (keep,)] = 1
        return mask * default_mask.to(dtype=mask.dtype)


class RandomStructured(_Structured):
    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def _channel_scores(self, t):
        return creation.rand(t.shape[self.dim], device=t.device)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def _channel_scores(self, t):
        dim = self.dim % t.ndim
        return t.norm(self.n, [d for d in range(t.ndim) if d != dim])

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError("mask shape should match default_mask shape")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune ``(module, name)`` pairs together, as if their tensors were one vector."""
    if not hasattr(parameters, "__iter__") or isinstance(parameters, (str, bytes)):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", creation.ones_like(getattr(m, n)))
                                         for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    with no_grad():
        final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + count].view_as(param))
        pointer += count


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent: the pruned tensor is the parameter."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     f"can be removed")


def is_pruned(module):
    """Whether any submodule has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod) for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())
