"""``gradcheck``/``gradgradcheck``: compare autograd's gradients with finite differences
(``torch/autograd/gradcheck.py``).

The numerical Jacobian perturbs one input element at a time by ``±eps`` (central differences);
the analytical one backpropagates a one-hot gradient per output element. Both are compared with
``allclose(analytical, numerical, rtol, atol)``. Use float64 inputs: the default tolerances
assume double precision.

A complex tensor counts as the real tensor of its (real, imag) pairs (``view_as_real``): each
part of an input is perturbed on its own, and the gradient of each part of an output is the
backward of a one-hot 1 (real part) or 1j (imaginary part), which under PyTorch's convention
(Note [Complex gradients]) yields d part / d Re(input) + i d part / d Im(input).

    >>> x = strata.randn(3, dtype=strata.float64, requires_grad=True)
    >>> strata.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    True
"""

import warnings

import numpy as np

from ..core import dtype as D
from ..ops import factory as F


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_tensor(x):
    return hasattr(x, "_ag")


def _numpy(t):
    """A float64 copy of ``t``'s values (never a view: the inputs are perturbed in place); a
    complex tensor's as (..., 2) pairs."""
    arr = t.detach().cpu()._np()
    if np.iscomplexobj(arr):
        arr = np.stack([arr.real, arr.imag], -1)
    return np.array(arr, dtype=np.float64)


def _write(t, values):
    """Overwrite ``t``'s elements without autograd noticing (gradcheck's perturbations); a
    complex ``t`` takes (..., 2) pairs."""
    if t.dtype.is_complex:
        values = values[..., 0] + 1j * values[..., 1]
    target = t.detach()
    if target.device.type == "cpu":
        np.copyto(target._np(), values, casting="unsafe")
    else:
        from .. import creation
        F.copy_(target, creation.tensor(values, dtype=t.dtype))


def _outputs(func, inputs):
    """The function's floating outputs as arrays (run in grad mode: ``func`` may itself call
    autograd, as gradgradcheck's first derivatives do)."""
    outs = _as_tuple(func(*inputs))
    return [_numpy(o) if _is_tensor(o) and o.dtype.is_differentiable else None for o in outs]


def _numerical_jacobians(func, inputs, diff_inputs, eps):
    """``J[i][k]``: d output k / d input i, as (input numel, output numel) arrays."""
    base = _outputs(func, inputs)
    jac = [[np.zeros((_numpy(x).size, 0 if o is None else o.size)) for o in base]
           for x in diff_inputs]
    for i, x in enumerate(diff_inputs):
        original = _numpy(x)
        flat = original.reshape(-1)
        for e in range(flat.size):
            perturbed = flat.copy()
            perturbed[e] += eps
            _write(x, perturbed.reshape(original.shape))
            plus = _outputs(func, inputs)
            perturbed[e] -= 2 * eps
            _write(x, perturbed.reshape(original.shape))
            minus = _outputs(func, inputs)
            _write(x, original)
            for k, (p, m) in enumerate(zip(plus, minus)):
                if p is not None:
                    jac[i][k][e] = ((p - m) / (2 * eps)).reshape(-1)
    return jac


def _analytical_jacobians(func, inputs, diff_inputs, check_grad_dtypes):
    from . import grad
    outs = _as_tuple(func(*inputs))
    sizes = [_numpy(x).size for x in diff_inputs]
    jac = [[np.zeros((size, 0)) for _ in outs] for size in sizes]
    for k, out in enumerate(outs):
        if not (_is_tensor(out) and out.dtype.is_differentiable and out.requires_grad):
            continue
        shape = _numpy(out).shape
        n = int(np.prod(shape))
        for i, size in enumerate(sizes):
            jac[i][k] = np.zeros((size, n))
        for j in range(n):
            onehot = np.zeros(n)
            onehot[j] = 1.0
            g_out = F.full(out._shape, 0, dtype=out.dtype, device=out.device)
            _write(g_out, onehot.reshape(shape))
            grads = grad(out, diff_inputs, g_out, retain_graph=True, allow_unused=True)
            for i, (x, g) in enumerate(zip(diff_inputs, grads)):
                if g is None:
                    continue
                if check_grad_dtypes and g.dtype is not x.dtype:
                    raise GradcheckError("Gradient has dtype mismatch")
                jac[i][k][:, j] = _numpy(g).reshape(-1)
    return jac


def _fail(message, raise_exception):
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if the analytical and numerical gradients of ``func`` at ``inputs`` agree."""
    for flag, name in ((check_batched_grad, "check_batched_grad"),
                       (check_batched_forward_grad, "check_batched_forward_grad"),
                       (check_forward_ad, "check_forward_ad")):
        if flag:
            raise NotImplementedError(f"strata gradcheck: {name}=True is not supported "
                                      f"(strata has no batched or forward-mode AD)")
    inputs = _as_tuple(inputs)
    diff_inputs = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i, x in enumerate(inputs):
        if _is_tensor(x) and x.requires_grad and x.dtype not in (D.float64, D.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          f"point or complex. This check will likely fail if all the inputs are "
                          f"not of double precision floating point or complex. ", UserWarning,
                          stacklevel=2)
    if not check_backward_ad:
        return True
    if fast_mode:
        return _fast_check(func, inputs, diff_inputs, eps, atol, rtol, raise_exception)
    numerical = _numerical_jacobians(func, inputs, diff_inputs, eps)
    analytical = _analytical_jacobians(func, inputs, diff_inputs, check_grad_dtypes)
    for i in range(len(diff_inputs)):
        for k in range(len(numerical[i])):
            n, a = numerical[i][k], analytical[i][k]
            if n.shape != a.shape:
                a = np.zeros_like(n) if a.size == 0 else a
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                return _fail(f"Jacobian mismatch for output {k} with respect to input {i},\n"
                             f"numerical:{n}\nanalytical:{a}\n", raise_exception)
    again = _analytical_jacobians(func, inputs, diff_inputs, False)
    for i in range(len(diff_inputs)):
        for a, b in zip(analytical[i], again[i]):
            if a.shape == b.shape and a.size and np.max(np.abs(a - b)) > nondet_tol:
                return _fail("Backward is not reentrant, i.e., running backward with same input "
                             "and grad_output multiple times gives different values, although "
                             "analytical gradient matches numerical gradient.The tolerance for "
                             f"nondeterminism was {nondet_tol}.", raise_exception)
    if check_undefined_grad and not _undefined_grad_ok(func, inputs, diff_inputs):
        return _fail("Expected backward function to handle undefined output grads. Please look "
                     "at \"Notes about undefined output gradients\" in \"tools/autograd/"
                     "derivatives.yaml\"", raise_exception)
    return True


def _undefined_grad_ok(func, inputs, diff_inputs):
    """Backward from undefined (None) output gradients must run and give no gradient, as
    PyTorch's check feeds undefined tensors to every backward formula."""
    from . import engine
    from .graph import gradient_edge
    outs = [o for o in _as_tuple(func(*inputs))
            if _is_tensor(o) and o.dtype.is_differentiable and o.requires_grad]
    if not outs:
        return True
    grads = engine.execute([gradient_edge(o) for o in outs], [None] * len(outs), False, False,
                           [gradient_edge(x) for x in diff_inputs], accumulate_grad=False)
    return all(g is None or not np.any(_numpy(g)) for g in grads)


def _fast_check(func, inputs, diff_inputs, eps, atol, rtol, raise_exception):
    """Compare ``v^T J u`` for random ``u`` (inputs) and ``v`` (outputs) instead of all of J."""
    from . import grad
    rng = np.random.default_rng(0)
    us = [rng.uniform(-1, 1, _numpy(x).shape) for x in diff_inputs]
    originals = [_numpy(x) for x in diff_inputs]
    outs = _as_tuple(func(*inputs))
    vs = [rng.uniform(-1, 1, _numpy(o).shape) if _is_tensor(o) and o.dtype.is_differentiable
          else None for o in outs]
    for x, o, u in zip(diff_inputs, originals, us):
        _write(x, o + eps * u)
    plus = _outputs(func, inputs)
    for x, o, u in zip(diff_inputs, originals, us):
        _write(x, o - eps * u)
    minus = _outputs(func, inputs)
    for x, o in zip(diff_inputs, originals):
        _write(x, o)
    numerical = sum(float(np.sum((p - m) / (2 * eps) * v))
                    for p, m, v in zip(plus, minus, vs) if v is not None)
    pairs = [(o, v) for o, v in zip(outs, vs) if v is not None and o.requires_grad]
    g_outs = []
    for o, v in pairs:
        g = F.full(o._shape, 0, dtype=o.dtype, device=o.device)
        _write(g, v)
        g_outs.append(g)
    grads = grad([o for o, _ in pairs], diff_inputs, g_outs, allow_unused=True) if pairs else ()
    analytical = sum(float(np.sum(_numpy(g) * u)) for g, u in zip(grads, us) if g is not None)
    if not np.isclose(analytical, numerical, rtol=rtol, atol=atol):
        return _fail(f"Jacobian mismatch for a random projection (fast mode),\n"
                     f"numerical:{numerical}\nanalytical:{analytical}\n", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradients themselves: second derivatives against finite differences of
    the first (which are computed with create_graph=True)."""
    from . import grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _as_tuple(func(*inputs))
        grad_outputs = tuple(
            F.randn(o._shape, dtype=o.dtype, device=o.device).requires_grad_()
            for o in outs if _is_tensor(o) and o.dtype.is_differentiable and o.requires_grad)
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def first_derivatives(*args):
        input_args, g_outs = args[:-n_out], args[-n_out:]
        outs = [o for o in _as_tuple(func(*input_args))
                if _is_tensor(o) and o.dtype.is_differentiable and o.requires_grad]
        diff = [a for a in input_args if _is_tensor(a) and a.requires_grad]
        grads = grad(outs, diff, g_outs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode)
