"""Stochastic Weight Averaging and EMA, as PyTorch's ``torch/optim/swa_utils.py``.

``AveragedModel`` keeps a copy of a model whose parameters are the running average of the
model's (``update_parameters`` after each step); ``SWALR`` anneals the lr to a constant SWA lr;
``update_bn`` recomputes BatchNorm statistics for the averaged weights with one pass over data.

    swa_model = AveragedModel(model)                      # equal-weight average (SWA)
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    ...; swa_model.update_parameters(model); swa_scheduler.step()
    update_bn(train_loader, swa_model)
"""

import itertools
import math
from copy import deepcopy

from .. import creation
from ..autograd.grad_mode import no_grad
from ..core import dtype as D
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._scheduler_base import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         f"range.")


def get_ema_multi_avg_fn(decay=0.999):
    """``ema = decay·ema + (1 − decay)·param`` for lists of tensors (a lerp for floats)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The running equal-weight mean for lists of tensors: ``avg += (param − avg) / (n + 1)``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].is_floating_point():
            # PyTorch's foreach lerp takes the weight as a Scalar: the value of the (float32)
            # tensor ``1 / (n + 1)``, whatever the parameters' dtype.
            weight = float(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.addcdiv_(p_model - p_avg, num_averaged + 1)
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``decay·ema + (1 − decay)·param`` for one tensor, returned (not in place)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg + (param − avg) / (n + 1)`` for one tensor, returned (not in place)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    average of the model's over the ``update_parameters`` calls; ``n_averaged`` counts them.

    Without ``avg_fn``/``multi_avg_fn`` it is the equal-weight SWA mean; otherwise the function
    combines the current average, the model's tensor and ``n_averaged``. Buffers are copied from
    the model unless ``use_buffers=True`` averages them too."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", creation.tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average (the first call copies them)."""
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self._tensors(self.module), self._tensors(model)):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None:
                groups = {}
                for p_averaged, p_model in zip(averaged, current):
                    key = (p_averaged.device, p_averaged.dtype)
                    groups.setdefault(key, ([], []))
                    groups[key][0].append(p_averaged)
                    groups[key][1].append(p_model)
                for (device, _), (self_params, model_params) in groups.items():
                    self.multi_avg_fn(self_params, model_params, self.n_averaged.to(device))
            else:
                # strata has no foreach kernels, so the default is PyTorch's per-tensor SWA mean.
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for p_averaged, p_model in zip(averaged, current):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running statistics with one pass over ``loader``: they are
    reset and then accumulated as a cumulative mean (``momentum=None``) in training mode."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its current value to ``swa_lr`` over ``anneal_epochs``
    steps (cosine or linear), then holds it.

        swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """Recover the lr the anneal started from (from the current one) and take one step."""
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def state_dict(self):
        """Every attribute except the optimizer and the anneal function (a bound method)."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
