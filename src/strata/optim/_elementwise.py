"""``_ElementwiseOptimizer``: the base of the optimizers whose update is elementwise (SGD, Adam,
RMSprop, ...): state created on the first step, ``maximize``, weight decay, and the choice
between a loop over the parameters and the flat multi-tensor path (``_multi_tensor.py``).

Separate from ``optimizer.py``, whose ``Optimizer`` (groups, state, state dicts, hooks) every
optimizer shares, LBFGS and SparseAdam included.
"""

from .._tensor import Tensor
from ..dispatch.tls import is_compiling
from ..ops import pointwise as P
from ._multi_tensor import flatten, get_bucket, plan
from ._native_update import has_device_update
from .optimizer import (
    Optimizer,
    _check_fused_or_capturable,
    _evaluate_closure,
    _lr,
    _new_step,
    _scalar_from_number,
    _use_grad_for_differentiable,
    check_fused_params,
)


class _ElementwiseOptimizer(Optimizer):
    """Base of the optimizers whose update is elementwise (SGD, Adam, RMSprop, ...).

    It holds everything they share, as PyTorch's ``_init_group`` / ``_single_tensor_*`` /
    ``_multi_tensor_*`` functions repeat it: gathering the parameters with a gradient, creating
    their state on the first step, ``maximize``, the step count, ``weight_decay`` (coupled into
    the gradient, or ``decoupled_weight_decay``), and the choice between a for-loop over the
    parameters and the flat multi-tensor path (``_multi_tensor``). A subclass gives its state
    (``_init_state``) and its math (``_update``), which runs unchanged on one parameter or on a
    whole flat bucket, so both paths give identical numbers.
    """

    # State entries that are 0-dim tensors (numbers in old checkpoints).
    _scalar_state = ("step",)
    # State entries that start as zeros like the parameter (see ``_init_state``).
    _zero_state = ()
    # Group options an older state dict may lack, as (name, default) pairs.
    _setstate_defaults = ()

    def __init__(self, params, defaults):
        _check_fused_or_capturable(type(self).__name__, defaults)
        super().__init__(params, defaults)
        self._buckets = {}
        self._plans = {}   # id(group) -> its ``_grouped_step`` plan (Note [Cached update plan])

    def __setstate__(self, state):
        super().__setstate__(state)
        self._buckets = {}
        self._plans = {}
        for group in self.param_groups:
            for key, value in self._setstate_defaults:
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, {})
                for name in self._scalar_state:
                    if name in p_state and not isinstance(p_state[name], Tensor):
                        p_state[name] = _scalar_from_number(p_state[name])

    def _init_missing_state(self):
        """The state of every parameter with a gradient that has none yet. ``step`` calls it
        first; capture runs it eagerly instead of tracing it (Dynamo's ``_init_group``), so a
        compiled step never creates state in its graph (Note [Traced optimizer step])."""
        for group in self.param_groups:
            if not self._keeps_state(group):
                continue
            for p in group["params"]:
                if p.grad is not None and len(self.state[p]) == 0:
                    self._init_state(self.state[p], p, group)

    def _init_state(self, state, param, group):
        """Fill the empty ``state`` of ``param`` before its first update: by default ``step``
        and a zero tensor like ``param`` for each name in ``_zero_state``."""
        state["step"] = _new_step()
        for name in self._zero_state:
            state[name] = param.new_zeros(param.shape)

    def _update(self, param, grad, state, group):
        """Update ``param`` and ``state`` in place; ``grad`` is already maximized and weight
        decayed, and ``state['step']`` already counts this step. ``param``, ``grad`` and every
        state tensor are either one parameter's or a flat bucket's."""
        raise NotImplementedError(f"{type(self).__name__} must implement _update()")  # by design

    def _update_decayed(self, param, grad, state, group, factor):
        """``param.mul_(factor)`` (decoupled weight decay) then ``_update`` in one fused
        update where the device has one (AdamW on opencl); False: the caller runs both."""
        return False

    def _keeps_state(self, group):
        """False where PyTorch keeps no state at all (SGD without momentum)."""
        return True

    def _fused_update(self, group):
        """The name of the fused update (optim/_native_update.py) ``_update`` runs, if any:
        none by default."""

    def _use_flat(self, group):
        """``foreach=None`` (the default) takes the multi-tensor path too. PyTorch's default picks
        its foreach path where it is the faster one (CUDA); in strata it is the faster one on
        every device, a dozen dispatches per bucket instead of per parameter, and its numbers
        are the for-loop's exactly. ``foreach=False`` keeps the for-loop. So does a device
        with a fused update of its own (opencl): one launch per group (``_grouped_step``) or
        per parameter, where flattening a bucket and copying it back take more."""
        if group["foreach"] is False or group["differentiable"]:
            return False
        params = group["params"]
        return not (params and has_device_update(params[0].device.type,
                                                 self._fused_update(group)))

    def _sparse_grad_error(self, group):
        """Why ``group`` cannot take sparse gradients (PyTorch's message), or None where it
        can: only SGD and Adagrad update with them (``nn.Embedding(sparse=True)``)."""
        return f"{type(self).__name__} does not support sparse gradients"

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns the closure's loss."""
        loss = _evaluate_closure(closure)
        sparse_groups = set()
        for index, group in enumerate(self.param_groups):
            if group.get("fused"):     # Note [Fused optimizers], before any state is made
                check_fused_params([p for p in group["params"] if p.grad is not None])
            if any(p.grad is not None and p.grad.is_sparse for p in group["params"]):
                error = self._sparse_grad_error(group)
                if error is not None:          # before any state changes
                    raise RuntimeError(error)
                sparse_groups.add(index)
        self._init_missing_state()
        for index, group in enumerate(self.param_groups):
            params, grads, states = self._gather(group)
            if not params:
                continue
            if is_compiling() or index in sparse_groups:
                # a sparse gradient updates its own rows, parameter by parameter (PyTorch's
                # single-tensor path)
                # Note [Traced optimizer step]: capture records the per-parameter ops; the
                # compiler fuses them, so flat buckets would only add copies to the graph.
                self._loop_step(params, grads, states, group)
            elif self._grouped_step(params, grads, states, group):
                continue
            elif self._use_flat(group):
                self._flat_step(index, params, grads, states, group)
            else:
                self._loop_step(params, grads, states, group)
        return loss

    def _gather(self, group):
        params, grads, states = [], [], []
        keeps_state = self._keeps_state(group)
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            states.append(self.state[p] if keeps_state else {})
        return params, grads, states

    def _apply(self, param, grad, state, group):
        if group["maximize"]:
            grad = P.neg(grad)
        if "step" in state:
            state["step"].add_(1)
        weight_decay = group.get("weight_decay", 0)
        if weight_decay != 0:
            if group.get("decoupled_weight_decay", False):
                factor = 1 - _lr(group) * weight_decay
                if not is_compiling() and self._update_decayed(param, grad, state, group,
                                                               factor):
                    return
                param.mul_(factor)
            else:
                grad = P.add(grad, param, alpha=weight_decay)
        self._update(param, grad, state, group)

    def _grouped_step(self, params, grads, states, group):
        """Update every parameter of ``group`` at once, step counts included, and return True:
        one parallel C call on the CPU (Note [One update kernel]) or a device's multi-tensor
        launch (opencl's Adam, AdamW, SGD), where it computes what the per-parameter update
        would; False (the default), with nothing done, where the flat path or the loop runs."""
        return False

    def _loop_step(self, params, grads, states, group):
        for param, grad, state in zip(params, grads, states):
            self._apply(param, grad, state, group)

    def _flat_step(self, index, params, grads, states, group):
        buckets, large = plan(params, grads, states)
        if large[0]:
            self._loop_step(*large, group)
        for key, (b_params, b_grads, b_states) in buckets.items():
            names = set(b_states[0])
            bucket = None
            if all(set(s) == names for s in b_states):
                bucket = get_bucket(self._buckets, (index,) + key, b_params, b_states,
                                    self._scalar_state)
            if bucket is None or not bucket.uniform():
                # Some states start this step, or parameters that skipped steps have their own
                # bias corrections: the for-loop is exact.
                self._loop_step(b_params, b_grads, b_states, group)
                continue
            flat_params = bucket.flat_params()
            self._apply(flat_params, flatten(b_grads), bucket, group)
            bucket.copy_to_params(flat_params)
