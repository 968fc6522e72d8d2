"""strata.autograd.functional against torch.autograd.functional: values, nesting of the
results (tensor vs tuple vs tuple of tuples), graph or no graph, strict-mode and input errors,
and float64 finite differences."""

import numpy as np
import pytest
from helpers import check, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

RNG = np.random.default_rng(0)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _flags(x):
    """The requires_grad pattern of a (nested) result, to compare graph vs no graph."""
    if isinstance(x, (tuple, list)):
        return type(x).__name__, [_flags(a) for a in x]
    return x.requires_grad


def check_functional(fn, *inputs):
    s, t = check(fn, *inputs)
    assert _flags(s) == _flags(t)
    return s, t


# --- functions: single/tuple inputs x single/tuple outputs --------------------------------------

def f_single(x):
    return x.exp() * x.sum()


def f_two_outputs(x):
    return x.sin(), (x * x).sum()


def f_two_inputs(x, y):
    return x @ y


def f_two_in_two_out(x, y):
    return x @ y, (x.tanh() * 2).sum() + y.sum()


def f_scalar(x):
    return (x.pow(3) * x.sin()).sum()


def f_scalar_two(x, y):
    return (x * x).sum() * y.exp().sum()


def _args(m, single, a, b):
    return a if single else (a, b)


CASES = [
    (f_single, True, (4,), (4,)),
    (f_two_outputs, True, (3,), (3,)),
    (f_two_inputs, False, (2, 3), (3, 2)),
    (f_two_in_two_out, False, (2, 3), (3, 2)),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("f, single, sa, sb", CASES)
def test_jacobian_matches_torch(f, single, sa, sb, create_graph):
    check_functional(lambda m, a, b: m.autograd.functional.jacobian(
        f, _args(m, single, a, b), create_graph=create_graph), arr(*sa), arr(*sb))


def test_jacobian_inputs_that_require_grad_keep_graph_only_with_create_graph():
    for create_graph in (False, True):
        check_functional(lambda m, a, cg=create_graph: m.autograd.functional.jacobian(
            f_single, a.requires_grad_(), create_graph=cg), arr(3))


def test_jacobian_vectorize_gives_same_values():
    check(lambda m, a, b: m.autograd.functional.jacobian(f_two_in_two_out, (a, b),
                                                         vectorize=True), arr(2, 3), arr(3, 2))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("f, single, sa, sb", CASES)
def test_vjp_matches_torch(f, single, sa, sb, create_graph):
    def run(m, a, b, *v):
        inputs = _args(m, single, a, b)
        with m.no_grad():   # the result must not depend on the caller's grad mode
            out = f(*inputs) if not single else f(inputs)
        v = tuple(m.ones_like(o) * (i + 1) for i, o in enumerate(out)) \
            if isinstance(out, tuple) else m.ones_like(out) * 0.5
        return m.autograd.functional.vjp(f, inputs, v, create_graph=create_graph)
    check_functional(run, arr(*sa), arr(*sb))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("f, single, sa, sb", CASES)
def test_jvp_matches_torch(f, single, sa, sb, create_graph):
    def run(m, a, b, va, vb):
        inputs = _args(m, single, a, b)
        v = va if single else (va, vb)
        return m.autograd.functional.jvp(f, inputs, v, create_graph=create_graph)
    check_functional(run, arr(*sa), arr(*sb), arr(*sa), arr(*sb))


def test_vjp_and_jvp_default_v_for_one_element():
    check_functional(lambda m, a: m.autograd.functional.vjp(lambda x: (x * x).sum(), a),
                     arr(3))
    check_functional(lambda m, a: m.autograd.functional.jvp(lambda x: x.exp() * 2, a), arr(1))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
def test_second_order_single_and_tuple(name, create_graph):
    def run(m, a, b, va, vb, single):
        fn = getattr(m.autograd.functional, name)
        f = f_scalar if single else f_scalar_two
        inputs = a if single else (a, b)
        if name == "hessian":
            return fn(f, inputs, create_graph=create_graph)
        return fn(f, inputs, va if single else (va, vb), create_graph=create_graph)
    for single in (True, False):
        check_functional(lambda m, *xs, one=single: run(m, *xs, one), arr(3), arr(2), arr(3),
                         arr(2))


def test_unused_input_gives_zeros_and_strict_raises():
    f = lambda x, y: x * 2
    check_functional(lambda m, a, b: m.autograd.functional.jacobian(f, (a, b)), arr(2), arr(3))
    check_functional(lambda m, a, b: m.autograd.functional.vjp(f, (a, b), m.ones(2)),
                     arr(2), arr(3))
    check_error(lambda m, a, b: m.autograd.functional.jacobian(f, (a, b), strict=True),
                arr(2), arr(3), match="independent of input 1")
    check_error(lambda m, a, b: m.autograd.functional.vjp(f, (a, b), m.ones(2), strict=True),
                arr(2), arr(3), match="independent of input 1")


STRICT_ERRORS = [
    # linear function: its jacobian does not depend on the input
    (lambda m, a: m.autograd.functional.hessian(lambda x: (2 * x).sum(), a, strict=True),
     "jacobian of the user-provided function"),
    (lambda m, a: m.autograd.functional.vhp(lambda x: (2 * x).sum(), a, m.ones(3), strict=True),
     "jacobian of the user-provided function"),
    # output does not require grad
    (lambda m, a: m.autograd.functional.vjp(lambda x: m.ones(3), a, m.ones(3), strict=True),
     "does not require gradients"),
    (lambda m, a: m.autograd.functional.jvp(lambda x: m.ones(3), a, m.ones(3), strict=True),
     "does not require gradients"),
]


@pytest.mark.parametrize("fn, match", STRICT_ERRORS)
def test_strict_mode_errors(fn, match):
    check_error(fn, arr(3), match=match)


BAD_INPUT = [
    (lambda m, a: m.autograd.functional.jacobian(lambda x: x, [a]), TypeError, "given inputs"),
    (lambda m, a: m.autograd.functional.jacobian(lambda x: x, (a, 3)), TypeError,
     "value at index 1"),
    (lambda m, a: m.autograd.functional.vjp(lambda x: (x, x), a, m.ones(3)), RuntimeError,
     "tuple of invalid length"),
    (lambda m, a: m.autograd.functional.vjp(lambda x: x, a, m.ones(4)), RuntimeError,
     "v has invalid size"),
    (lambda m, a: m.autograd.functional.vjp(lambda x: x, a), RuntimeError,
     "v can only be None"),
    (lambda m, a: m.autograd.functional.jvp(lambda x: x, a), RuntimeError, "v can only be None"),
    (lambda m, a: m.autograd.functional.jvp(lambda x: x, (a, a), (m.ones(3),)), RuntimeError,
     "tuple of invalid length"),
    (lambda m, a: m.autograd.functional.hessian(lambda x: x * 2, a), RuntimeError,
     "should contain a single element"),
    (lambda m, a: m.autograd.functional.hessian(lambda x: (x.sum(), x.sum()), a), RuntimeError,
     "should return a single Tensor"),
    (lambda m, a: m.autograd.functional.hvp(lambda x: x * 2, a, m.ones(3)), RuntimeError,
     "should contain a single element"),
    (lambda m, a: m.autograd.functional.vhp(lambda x: (x.sum(),), a, m.ones(3)), RuntimeError,
     "should return a single Tensor"),
    (lambda m, a: m.autograd.functional.jacobian(lambda x: x, a, strategy="sideways"),
     AssertionError, "forward-mode"),
    (lambda m, a: m.autograd.functional.jacobian(lambda x: x, a, strict=True, vectorize=True),
     RuntimeError, "not supported together"),
    (lambda m, a: m.autograd.functional.jacobian(lambda x: "no", a), TypeError,
     "outputs of the user-provided function"),
]


@pytest.mark.parametrize("fn, exc, match", BAD_INPUT)
def test_bad_input_raises_like_torch(fn, exc, match):
    s_err, _ = check_error(fn, arr(3), match=match)
    assert isinstance(s_err, exc)


def test_forward_mode_strategy_is_refused_clearly():
    x = strata.ones(3)
    with pytest.raises(RuntimeError, match="forward-mode AD.*strata"):
        strata.autograd.functional.jacobian(lambda t: t * 2, x, strategy="forward-mode",
                                            vectorize=True)
    with pytest.raises(RuntimeError, match="outer_jacobian_strategy"):
        strata.autograd.functional.hessian(lambda t: t.sum(), x,
                                           outer_jacobian_strategy="forward-mode")


def test_create_graph_result_is_differentiable_like_torch():
    def run(m, a, v):
        a.requires_grad_()
        _, r = m.autograd.functional.vjp(lambda x: x.sin() * x, a, v, create_graph=True)
        return m.autograd.grad(r.sum(), a)
    check(run, arr(4), arr(4))


def test_caller_inputs_are_not_modified_or_given_grads():
    x = strata.tensor(arr(3), requires_grad=True)
    strata.autograd.functional.jacobian(f_single, x)
    strata.autograd.functional.hvp(f_scalar, x, strata.ones(3))
    assert x.grad is None and x.grad_fn is None


def _numerical_jacobian(f, x, eps=1e-6):
    x = x.copy()
    cols = []
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        plus = f(strata.tensor(x + d)).numpy()
        minus = f(strata.tensor(x - d)).numpy()
        cols.append(((plus - minus) / (2 * eps)).reshape(-1))
    return np.stack(cols, axis=-1)


def test_jacobian_and_hessian_match_finite_differences():
    x = arr(2, 3)
    f = lambda t: (t.sin() * t.sum(dim=0)).tanh()
    jac = strata.autograd.functional.jacobian(f, strata.tensor(x))
    np.testing.assert_allclose(jac.numpy().reshape(6, 6), _numerical_jacobian(f, x), atol=1e-7)
    g = lambda t: strata.autograd.functional.jacobian(f_scalar, t)
    hess = strata.autograd.functional.hessian(f_scalar, strata.tensor(x[0]))
    np.testing.assert_allclose(hess.numpy(), _numerical_jacobian(g, x[0]), atol=1e-7)


def test_create_graph_jacobian_passes_gradcheck():
    x = strata.tensor(arr(3), requires_grad=True)
    assert strata.autograd.gradcheck(
        lambda t: strata.autograd.functional.jacobian(f_single, t, create_graph=True), (x,))
    assert strata.autograd.gradcheck(
        lambda t: strata.autograd.functional.hvp(f_scalar, t, strata.ones(3),
                                                 create_graph=True)[1], (x,))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 3), dtype=st.sampled_from(["float32", "float64"]))
def test_jacobian_hypothesis_shapes_and_dtypes(n, k, dtype):
    a, b = arr(n, k, dtype=np.dtype(dtype)), arr(k, dtype=np.dtype(dtype))
    check(lambda m, x, y: m.autograd.functional.jacobian(
        lambda p, q: ((p @ q).exp(), p.sum(dim=0) * q), (x, y)), a, b,
        atol=1e-5 if dtype == "float32" else None)
