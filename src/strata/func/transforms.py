"""``strata.func`` gradient transforms: grad, grad_and_value, vjp, jacrev, hessian
(``torch/_functorch/eager_transforms.py``), built on the ordinary reverse-mode graph.

PyTorch wraps tensors per transform level; strata differentiates against fresh tensors made for
each call instead (``_make_differentiable``). A fresh tensor stays connected to the caller's
graph when the argument required grad (so transforms nest: ``jacrev(jacrev(f))``), and the
results keep their graph only when someone outside can use it: an enclosing transform, or an
argument that required grad. Otherwise they come back detached, as PyTorch's unwrapped results.

    >>> strata.func.grad(lambda x: x.sin().sum())(x)          # == x.cos()
"""

import functools
import threading

from .. import autograd
from .._tensor import _is_tensor
from ..autograd.functional import output_jacobian
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..creation import zeros_like
from .pytree import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp"]


class _Nesting(threading.local):
    depth = 0


_nesting = _Nesting()


class _transform_level:
    """Marks the body of a grad transform: work inside is seen by an enclosing transform."""

    def __enter__(self):
        _nesting.depth += 1

    def __exit__(self, *exc):
        _nesting.depth -= 1


def _tracked(*trees):
    """Whether results must stay differentiable for a caller outside this transform."""
    if not is_grad_enabled():
        return False
    return _nesting.depth > 0 or any(_is_tensor(t) and t.requires_grad
                                     for t in tree_leaves(trees))


def _make_differentiable(x):
    if not _is_tensor(x):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_()


def _undo(tree, tracked):
    if tracked:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([t.detach() if _is_tensor(t) else t for t in leaves], spec)


def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _wrap_argnums(argnums, num_args):
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    argnums = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def _differentiable_args(args, argnums):
    """``(new_args, diff)``: args with the ones at ``argnums`` made differentiable, and those
    (one pytree for an int ``argnums``, else a tuple of them)."""
    argnums = _wrap_argnums(argnums, len(args))
    picked = (argnums,) if isinstance(argnums, int) else argnums
    args = list(args)
    for i in picked:
        leaves, spec = tree_flatten(args[i])
        args[i] = tree_unflatten([_make_differentiable(t) for t in leaves], spec)
    diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    return tuple(args), diff


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return output


def _grads_or_zeros(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False):
    """``autograd.grad`` over the outputs that require grad, zeros for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return tuple(zeros_like(t) for t in inputs)
    outs, gos = zip(*pairs)
    res = autograd.grad(outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
                        allow_unused=True)
    return tuple(zeros_like(t) if g is None else g for g, t in zip(res, inputs))


def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (x -> (df/dx, f(x)))`` for a scalar-valued ``f``; with ``has_aux`` ``f`` returns
    ``(out, aux)`` and the value is ``(out, aux)``.

        >>> g, value = strata.func.grad_and_value(lambda x: (x ** 2).sum())(x)
    """
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        tracked = _tracked(args, kwargs)
        with _transform_level(), enable_grad():
            args, diff = _differentiable_args(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, api)
            if not _is_tensor(output):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use "
                                   f"the vjp or jacrev APIs instead?")
            flat_diff, spec = tree_flatten(diff)
            grads = _grads_or_zeros((output,), flat_diff, create_graph=tracked)
            grads = _undo(tree_unflatten(list(grads), spec), tracked)
        value = _undo(output, tracked)
        if has_aux:
            return grads, (value, _undo(aux, tracked))
        return grads, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``f -> df/dx`` for a scalar-valued ``f`` (with ``has_aux``: ``(df/dx, aux)``).

        >>> strata.func.grad(lambda x: x.sin().sum())(x)   # x.cos()
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def _vjp(func, primals, argnums, has_aux, api):
    """``(output, vjp_fn, aux, info)``: ``func`` run on ``primals`` with the ones at
    ``argnums`` (all when None) made differentiable; ``info`` is what jacrev needs:
    ``(tracked, flat outputs, flat differentiable inputs, their spec)``."""
    tracked = _tracked(primals)
    with _transform_level(), enable_grad():
        if argnums is None:
            primals, diff = _differentiable_args(primals, tuple(range(len(primals))))
        else:
            primals, diff = _differentiable_args(primals, argnums)
        output, aux = _split_aux(func(*primals), has_aux, api)
        flat_out, out_spec = tree_flatten(output)
        if not flat_out:
            raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                               f"(got output = {output})")
        for o in flat_out:
            if not _is_tensor(o):
                raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            if not o.dtype.is_floating_point:
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
    flat_diff, diff_spec = tree_flatten(diff)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{cot_spec}, primal output: {out_spec}")
        keep = tracked or any(_is_tensor(c) and c.requires_grad for c in flat_cot)
        with enable_grad():
            res = _grads_or_zeros(flat_out, flat_diff, flat_cot, retain_graph=retain_graph,
                                  create_graph=create_graph and keep)
        return _undo(tree_unflatten(list(res), diff_spec), keep and create_graph)

    info = (tracked, flat_out, flat_diff, diff_spec)
    return _undo(output, tracked), vjp_fn, _undo(aux, tracked), info


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn[, aux])``; ``vjp_fn(cotangents)`` returns one gradient per
    primal (a tuple), the cotangents shaped like the output.

        >>> out, vjp_fn = strata.func.vjp(lambda x: x.sin(), x)
        >>> (g,) = vjp_fn(strata.ones_like(out))   # x.cos()
    """
    output, vjp_fn, aux, _ = _vjp(func, primals, None, has_aux, "vjp(f, *primals)")
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """``f -> (x -> J)`` by reverse mode, one backward per output element. For each output
    leaf ``J`` has shape ``out.shape + in.shape`` (a tuple over ``argnums`` if it is a tuple).

        >>> strata.func.jacrev(lambda x: x ** 2)(strata.tensor([1.0, 2.0]))   # diag(2, 4)

    ``chunk_size`` is validated and otherwise unused (strata computes rows one at a time).
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        output, _, aux, (tracked, flat_out, flat_diff, diff_spec) = _vjp(
            func, args, argnums, has_aux, "vjp(f, *primals)")
        with enable_grad():
            per_output = [tree_unflatten(_output_jacobian(out, flat_diff, tracked), diff_spec)
                          for out in flat_out]
        jac = _undo(tree_unflatten(per_output, tree_flatten(output)[1]), tracked)
        return (jac, aux) if has_aux else jac
    return wrapper


def _output_jacobian(out, inputs, tracked):
    """One output's Jacobian per input; an empty output has an empty one (no rows to stack)."""
    if out.numel() == 0:
        return [t.new_zeros(tuple(out.shape) + tuple(t.shape)) for t in inputs]
    return list(output_jacobian(out, inputs, tracked))


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacrev(jacrev(func))`` (PyTorch uses forward over
    reverse; strata has reverse mode only).

        >>> strata.func.hessian(lambda x: x.pow(3).sum())(x)   # diag(6 * x)
    """
    return jacrev(jacrev(func, argnums), argnums)


def _forward_mode(name):
    def unsupported(*args, **kwargs):
        raise RuntimeError(f"strata.func.{name}: forward-mode AD is not supported in strata "
                           f"(reverse mode only); use strata.func.jacrev or strata.func.vjp, or "
                           f"strata.autograd.functional.jvp (double-backward trick) instead")
    unsupported.__name__ = name
    unsupported.__doc__ = f"``torch.func.{name}`` needs forward-mode AD: raises RuntimeError."
    return unsupported


jacfwd = _forward_mode("jacfwd")
jvp = _forward_mode("jvp")
linearize = _forward_mode("linearize")
