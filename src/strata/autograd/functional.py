"""``strata.autograd.functional``: vjp, jvp, jacobian, hessian, vhp, hvp of a Python function
(``torch/autograd/functional.py``), all built on reverse mode (``autograd.grad``).

    >>> jac = strata.autograd.functional.jacobian(lambda x: x.exp(), strata.ones(3))

Inputs are a Tensor or a tuple of Tensors; results come back with the same nesting as PyTorch's
(a Tensor where the caller gave a Tensor, a tuple where it gave a tuple). ``jvp`` and ``hvp``
use the double-backward trick: the gradient of a vjp with respect to its (dummy) cotangent is
the jvp. strata has no forward-mode AD, so ``strategy="forward-mode"`` raises.
"""

from .. import autograd as _autograd
from .._tensor import _is_tensor
from ..creation import zeros_like
from ..ops import shape as S
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_FORWARD_MODE = ("strata.autograd.functional.{0}: {1}=\"forward-mode\" needs forward-mode AD, "
                 "which strata does not implement. Use {1}=\"reverse-mode\".")


def _as_tuple(inp, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``, with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not _is_tensor(el):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag, or (outer, inner) for nested results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensor objects to differentiate against, so a function that closes over the
    caller's tensors is not confused with one that uses its arguments (pytorch#32576)."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if _is_tensor(inputs[0]):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_STRICT_REQUIRES_GRAD = {
    "hessian": ("The hessian of the user-provided function with respect to input {} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
}


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_STRICT_REQUIRES_GRAD[input_type].format(i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` that skips outputs which do not require grad (None for every input if
    none does) and allows unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs)
             if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, grads = zip(*pairs)
    return _autograd.grad(outs, inputs, grads, allow_unused=True, create_graph=create_graph,
                          retain_graph=retain_graph)


_STRICT_NONE = {
    "back": ("The output of the user-provided function is independent of input {}. This is not "
             "allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {} "
                          "in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replace a None gradient by zeros shaped like ``refs[i]`` (or raise in strict mode)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare(func, inputs, v, create_graph, strict, fn_name, v_like_inputs):
    """The common first stage: tuple-ise and re-leaf the inputs, check ``v`` against the inputs
    (``v_like_inputs``) or the outputs, run ``func`` under grad mode."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            v = _grad_preprocess(_as_tuple(v, "v", fn_name)[1], create_graph, need_graph=False)
        if v_like_inputs:
            _check_v(v, inputs, is_inputs_tuple, "the input to the user-provided function is "
                     "a single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              fn_name)
        _check_requires_grad(outputs, "outputs", strict=strict)
        if not v_like_inputs:
            _check_v(v, outputs, is_outputs_tuple, "user-provided function returns a single "
                     "Tensor with a single element.")
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def _check_v(v, other, is_other_tuple, when_none):
    if v is not None:
        _validate_v(v, other, is_other_tuple)
    elif len(other) != 1 or other[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if the {when_none}")


def _check_scalar_output(outputs, is_outputs_tuple, fn_name):
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           f"contain a single element")


def _finish(outputs, is_outputs_tuple, result, is_result_tuple, create_graph):
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_result_tuple))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

        >>> out, g = vjp(lambda x: x.exp().sum(dim=1), strata.rand(4, 4), strata.ones(4))
    """
    is_in_tuple, inputs, v, is_out_tuple, outputs = _prepare(
        func, inputs, v, create_graph, strict, "vjp", v_like_inputs=False)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return _finish(outputs, is_out_tuple, res, is_in_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), J v)`` by the double-backward trick: ``u -> J^T u`` is linear in ``u``,
    so differentiating it with respect to a dummy ``u`` in direction ``v`` gives ``J v``.

        >>> out, jv = jvp(lambda x: x ** 2, strata.ones(3), strata.ones(3))
    """
    _, inputs, v, is_out_tuple, outputs = _prepare(
        func, inputs, v, create_graph, strict, "jvp", v_like_inputs=True)
    with enable_grad():
        # Any finite values work: they do not appear in the double-backward graph.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return _finish(outputs, is_out_tuple, res, is_out_tuple, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape ``out_i.shape +
    in_j.shape`` (tuple levels dropped where the caller gave a single Tensor).

    One ``autograd.grad`` per output element. ``vectorize=True`` is accepted and computes the
    same rows one by one (strata has no batched gradients).

        >>> jacobian(lambda x: x ** 2, strata.tensor([1.0, 2.0]))   # diag(2, 4)
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        raise RuntimeError(_FORWARD_MODE.format("jacobian", "strategy"))
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        jac = tuple(output_jacobian(out, inputs, create_graph, strict, i)
                    for i, out in enumerate(outputs))
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def output_jacobian(out, inputs, create_graph, strict=False, i=0):
    """The Jacobian of one output (number ``i``, for errors) with respect to each of
    ``inputs``: one ``grad`` per element of ``out``, stacked and shaped ``out + input``."""
    rows = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for j in range(out.nelement()):
        vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
        for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {k}. This is not allowed in "
                                       f"strict mode.")
                g = zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   f"create_graph=True.")
            row.append(g)
    return tuple(S.stack(row, 0).view(tuple(out.shape) + tuple(inp.shape))
                 for row, inp in zip(rows, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian of its Jacobian. ``H[i][j]`` has shape
    ``in_i.shape + in_j.shape``.

        >>> hessian(lambda x: x.pow(3).sum(), strata.ones(2))   # diag(6, 6)
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        raise RuntimeError(_FORWARD_MODE.format("hessian", "outer_jacobian_strategy"))

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        _check_scalar_output(t_out, is_out_tuple, "hessian")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_jacobian(func, inputs, v, create_graph, strict, fn_name):
    """The shared first stage of vhp/hvp: outputs (one scalar) and the gradient, as a graph."""
    is_in_tuple, inputs, v, is_out_tuple, outputs = _prepare(
        func, inputs, v, create_graph, strict, fn_name, v_like_inputs=True)
    _check_scalar_output(outputs, is_out_tuple, fn_name)
    with enable_grad():
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    return is_in_tuple, inputs, v, is_out_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T H)`` for a scalar ``func``.

        >>> out, r = vhp(lambda x: x.pow(3).sum(), strata.ones(2), strata.ones(2))
    """
    is_in_tuple, inputs, v, is_out_tuple, outputs, jac = _scalar_jacobian(
        func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return _finish(outputs, is_out_tuple, res, is_in_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), H v)`` for a scalar ``func``, by the double-backward trick (slower than
    ``vhp``, which equals it when ``func`` is twice continuously differentiable).

        >>> out, r = hvp(lambda x: x.pow(3).sum(), strata.ones(2), strata.ones(2))
    """
    is_in_tuple, inputs, v, is_out_tuple, outputs, jac = _scalar_jacobian(
        func, inputs, v, create_graph, strict, "hvp")
    with enable_grad():
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return _finish(outputs, is_out_tuple, res, is_in_tuple, create_graph)
