"""``strata.func``: composable function transforms (``torch.func``) over strata's eager ops.

    >>> per_sample_grads = strata.func.vmap(strata.func.grad(loss), in_dims=(None, 0, 0))
    >>> per_sample_grads(params, xs, ys)

``grad``/``grad_and_value``/``vjp``/``jacrev``/``hessian`` use the reverse-mode graph (see
``transforms``); ``vmap`` is a per-sample loop plus stack, PyTorch's slow fallback path, with no
batching rules (see ``vmap``); ``functional_call`` swaps a module's tensors for one call, and
``stack_module_state`` stacks an ensemble's for it.
strata has no forward-mode AD: ``jacfwd``, ``jvp`` and ``linearize`` raise RuntimeError.
"""

from .functional_call import functional_call, stack_module_state
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]
