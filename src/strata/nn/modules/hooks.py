"""Hook handles, and the machinery behind Module full backward hooks.

``BackwardHook`` follows ``torch/utils/hooks.py``: the module's tensor inputs and outputs pass
through an identity autograd Function, so one node sits on each side of the module in the graph.
A pre-hook on the output-side node sees ``grad_output`` (and runs backward pre-hooks); a hook on
the input-side node sees ``grad_input`` and calls the full backward hooks with both.
"""

import itertools
from collections import OrderedDict

_ids = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*_hook``: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.id = next(_ids)
        self.hooks_dict = hooks_dict
        if extra_dict is None:
            extra_dict = []
        elif isinstance(extra_dict, (dict, OrderedDict)):
            extra_dict = [extra_dict]
        self.extra_dicts = extra_dict

    def remove(self):
        self.hooks_dict.pop(self.id, None)
        for d in self.extra_dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _identity_function():
    from ...autograd.function import Function

    class BackwardHookFunction(Function):
        @staticmethod
        def forward(ctx, *args):
            ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
            return args

        @staticmethod
        def backward(ctx, *grads):
            return grads

    return BackwardHookFunction


class BackwardHook:
    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = 0
        self.input_requires_grad = False

    def _wrap(self, values, hook_installer):
        from ..._tensor import Tensor
        positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        tensors = [values[i] for i in positions]
        if not any(t.requires_grad for t in tensors):
            return values, False
        fn = _identity_function()
        outs = fn.apply(*tensors)
        outs = outs if isinstance(outs, tuple) else (outs,)
        grad_fn = next(o.grad_fn for o in outs if o.grad_fn is not None)
        hook_installer(grad_fn, len(values), positions)
        new = list(values)
        for i, o in zip(positions, outs):
            new[i] = o
        return new, True

    def setup_input_hook(self, args):
        def install(grad_fn, n, positions):
            def hook(grad_inputs, _):
                full = [None] * n
                for i, g in zip(positions, grad_inputs):
                    full[i] = g
                res = tuple(full)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is not None:
                        res = tuple(out)
                return tuple(res[i] for i in positions)
            grad_fn.register_hook(hook)

        new, self.input_requires_grad = self._wrap(args, install)
        return tuple(new)

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        values = (result,) if single else result

        def install(grad_fn, n, positions):
            def prehook(grad_outputs):
                full = [None] * n
                for i, g in zip(positions, grad_outputs):
                    full[i] = g
                res = tuple(full)
                for user_hook in self.user_pre_hooks:
                    out = user_hook(self.module, res)
                    if out is not None:
                        res = tuple(out)
                self.grad_outputs = res
                if not self.input_requires_grad and self.user_hooks:
                    import warnings
                    warnings.warn("Full backward hook is firing when gradients are computed with "
                                  "respect to module outputs since no inputs require gradients. "
                                  "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                                  "Module.html#torch.nn.Module.register_full_backward_hook for "
                                  "more details.")
                    for user_hook in self.user_hooks:
                        user_hook(self.module, (None,) * 1, self.grad_outputs)
                return tuple(res[i] for i in positions)
            grad_fn.register_prehook(prehook)

        new, _ = self._wrap(values, install)
        return new[0] if single else tuple(new)
