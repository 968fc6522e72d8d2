"""strata.func against torch.func: grad, grad_and_value, vjp, jacrev, hessian, vmap (a
per-sample loop), functional_call. Values, result structure (tuples, dicts), whether results
carry a graph, error types and wording, composition, float64 finite differences."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

RNG = np.random.default_rng(0)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _plain(x):
    """Dicts as (key, value) tuples, so the shared comparison can walk them."""
    if isinstance(x, dict):
        return tuple((k, _plain(v)) for k, v in x.items())
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(a) for a in x)
    return x


def _flags(x):
    if isinstance(x, (tuple, list)):
        return [_flags(a) for a in x]
    return x.requires_grad if hasattr(x, "requires_grad") else x


def check_func(fn, *arrays, **kw):
    """``fn(m, *tensors)`` on both libraries: same values, nesting and requires_grad."""
    t = _plain(fn(torch, *(torch.tensor(a) for a in arrays)))
    s = _plain(fn(strata, *(strata.tensor(a) for a in arrays)))
    assert_same(s, t, **kw)
    assert _flags(s) == _flags(t)
    return s, t


def f_scalar(x, y):
    return (x.sin() * y.exp()).sum()


# --- grad / grad_and_value ----------------------------------------------------------------------

@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1,)])
def test_grad_and_value_argnums(argnums):
    check_func(lambda m, a, b: m.func.grad(f_scalar, argnums=argnums)(a, b), arr(3), arr(3))
    check_func(lambda m, a, b: m.func.grad_and_value(f_scalar, argnums=argnums)(a, b),
               arr(3), arr(3))


def test_grad_has_aux_dict_argument_and_unused_input():
    def loss(params, x, unused):
        out = (params["w"] * x).sum() + params["b"].pow(2).sum()
        return out, {"double": out * 2}
    run = lambda m, w, b, x, u: m.func.grad(loss, argnums=(0, 2), has_aux=True)(
        {"w": w, "b": b}, x, u)
    check_func(run, arr(3), arr(2), arr(3), arr(4))
    run = lambda m, w, b, x, u: m.func.grad_and_value(loss, has_aux=True)(
        {"w": w, "b": b}, x, u)
    check_func(run, arr(3), arr(2), arr(3), arr(4))


def test_grad_results_keep_graph_only_for_inputs_that_require_grad():
    check_func(lambda m, a, b: m.func.grad_and_value(f_scalar)(a.requires_grad_(), b),
               arr(3), arr(3))
    # ... and the graph is right: d/da of sum(grad) == torch's
    def run(m, a, b):
        a.requires_grad_()
        g = m.func.grad(f_scalar)(a, b)
        return m.autograd.grad(g.sum(), a)
    check_func(run, arr(3), arr(3))


def test_grad_of_grad_and_closure_over_outer_input():
    check_func(lambda m, a: m.func.grad(lambda x: m.func.grad(lambda y: (y ** 4).sum())(x)
                                        .sum())(a), arr(3))
    # the inner transform reads the outer input through a closure only
    check_func(lambda m, a, c: m.func.grad(
        lambda x: m.func.grad(lambda y: (y * x.exp()).sum())(c).sum())(a), arr(3), arr(3))


def test_grad_ignores_outer_no_grad():
    def run(m, a, b):
        with m.no_grad():
            return m.func.grad(f_scalar)(a, b)
    check_func(run, arr(3), arr(3))


GRAD_ERRORS = [
    (lambda m, a: m.func.grad(lambda x: x * 2)(a), RuntimeError, "scalar Tensor, got tensor"),
    (lambda m, a: m.func.grad(lambda x: 1.0)(a), RuntimeError, "to return a Tensor"),
    (lambda m, a: m.func.grad(lambda x: x.sum(), has_aux=True)(a), RuntimeError,
     r"should be a tuple: \(output, aux\)"),
    (lambda m, a: m.func.grad(lambda x: x.sum(), argnums=1)(a), RuntimeError,
     "Got argnum=1, but only 1 positional inputs"),
    (lambda m, a: m.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(a, a), RuntimeError,
     "argnums elements must be unique"),
    (lambda m, a: m.func.grad(lambda x, y: x.sum(), argnums=())(a, a), RuntimeError,
     "argnums must be non-empty"),
    (lambda m, a: m.func.grad(lambda x: x.sum(), argnums=[0])(a), RuntimeError,
     "argnums must be int or Tuple"),
    (lambda m, a: m.func.grad(lambda x, y: x.sum(), argnums=1)(a, 2.0), ValueError,
     "Thing passed to transform API must be Tensor"),
]


@pytest.mark.parametrize("fn, exc, match", GRAD_ERRORS)
def test_grad_errors_like_torch(fn, exc, match):
    s_err, _ = check_error(fn, arr(3), match=match)
    assert isinstance(s_err, exc)


# --- vjp / jacrev / hessian ---------------------------------------------------------------------

def test_vjp_structures():
    def run(m, a, b, c1, c2):
        out, fn = m.func.vjp(lambda x, y: (x * y, {"s": x.sum()}), a, b)
        return out, fn((c1, {"s": c2.sum()}))
    check_func(run, arr(3), arr(3), arr(3), arr(1))

    def run_aux(m, a, c):
        out, fn, aux = m.func.vjp(lambda x: (x.exp(), x.cos()), a, has_aux=True)
        return out, fn(c), aux
    check_func(run_aux, arr(3), arr(3))


def test_vjp_errors_like_torch():
    def bad_cotangents(m, a):
        _, fn = m.func.vjp(lambda x: (x, x), a)
        return fn(a)
    check_error(bad_cotangents, arr(3), match="pytree structure of cotangents")
    check_error(lambda m, a: m.func.vjp(lambda x: 3, a), arr(3), match="only tensors")
    check_error(lambda m, a: m.func.vjp(lambda x: (x > 0), a), arr(3),
                match="must be floating-point")
    check_error(lambda m, a: m.func.vjp(lambda x: (), a), arr(3), match="non-empty output")


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacrev_outputs_and_argnums(argnums):
    f = lambda x, y: (x[:, None] * y, {"n": (x ** 2).sum()})
    check_func(lambda m, a, b: m.func.jacrev(f, argnums=argnums)(a, b), arr(3), arr(2))


def test_jacrev_dict_input_and_has_aux():
    f = lambda p: ((p["w"] @ p["v"]).tanh(), p["w"].sum())
    check_func(lambda m, w, v: m.func.jacrev(f, has_aux=True)({"w": w, "v": v}),
               arr(2, 3), arr(3))
    check_error(lambda m, a: m.func.jacrev(lambda x: x, chunk_size=0)(a), arr(3),
                match="chunk_size")


def test_jacrev_of_empty_output():
    check_func(lambda m, a: m.func.jacrev(lambda x: (x[:0], x.sum()))(a), arr(3))


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_hessian_matches_torch(argnums):
    check_func(lambda m, a, b: m.func.hessian(f_scalar, argnums=argnums)(a, b), arr(3), arr(3))


def _numerical_jacobian(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        cols.append(((f(strata.tensor(x + d)).numpy() - f(strata.tensor(x - d)).numpy())
                     / (2 * eps)).reshape(-1))
    return np.stack(cols, axis=-1)


def test_jacrev_and_hessian_match_finite_differences():
    x = arr(4)
    f = lambda t: (t.sin() * t.sum()).exp()
    np.testing.assert_allclose(strata.func.jacrev(f)(strata.tensor(x)).numpy(),
                               _numerical_jacobian(f, x), rtol=1e-6, atol=1e-8)
    g = lambda t: strata.func.grad(lambda u: f(u).sum())(t)
    np.testing.assert_allclose(strata.func.hessian(lambda u: f(u).sum())(strata.tensor(x))
                               .numpy(), _numerical_jacobian(g, x), rtol=1e-6, atol=1e-8)


def test_grad_transform_passes_gradcheck():
    x = strata.tensor(arr(3), requires_grad=True)
    assert strata.autograd.gradcheck(strata.func.grad(lambda t: (t.sin() * t).sum()), (x,))


@pytest.mark.parametrize("name", ["jacfwd", "jvp", "linearize"])
def test_forward_mode_transforms_are_refused(name):
    fn = getattr(strata.func, name)
    with pytest.raises(RuntimeError, match="forward-mode AD is not supported in strata"):
        fn(lambda x: x)(strata.ones(2)) if name == "jacfwd" else \
            fn(lambda x: x, (strata.ones(2),), (strata.ones(2),))


# --- vmap ---------------------------------------------------------------------------------------

VMAP_CASES = [   # (vmapped function, input shapes, how the inputs become its arguments)
    (lambda m: m.vmap(m.dot), [(4, 3), (4, 3)], tuple),
    (lambda m: m.vmap(lambda x, y: x * y, in_dims=(1, None)), [(3, 5), (3,)], tuple),
    (lambda m: m.vmap(lambda x: x.sum(0), in_dims=-1, out_dims=-1), [(2, 3, 4)], tuple),
    (lambda m: m.vmap(lambda x: (x.exp(), x.sum()), out_dims=(1, 0)), [(4, 3)], tuple),
    (lambda m: m.vmap(lambda p: p[0] @ p[1], in_dims=((0, None),)), [(5, 2, 3), (3, 2)],
     lambda ts: (ts,)),
    (lambda m: m.vmap(m.vmap(lambda a, b: a * b)), [(2, 3, 4), (2, 3, 4)], tuple),
    (lambda m: m.vmap(lambda x, s: x * s, in_dims=(0, None)), [(3, 2)],
     lambda ts: (*ts, 2.5)),
    (lambda m: m.vmap(lambda x: (x.sum(), 7), out_dims=(0, None)), [(3, 2)], tuple),
]


@pytest.mark.parametrize("make, shapes, as_args", VMAP_CASES)
def test_vmap_matches_torch(make, shapes, as_args):
    check_func(lambda m, *ts: make(m)(*as_args(ts)), *(arr(*s) for s in shapes))


def test_vmap_dict_inputs_kwargs_and_out_dims_none():
    f = lambda d, scale=1.0: {"y": d["a"] * scale + d["b"], "c": d["b"].sum()}
    check_func(lambda m, a, b: m.vmap(f, in_dims=({"a": 0, "b": None},),
                                      out_dims={"y": 1, "c": None})({"a": a, "b": b}, scale=3.0),
               arr(4, 2), arr(2))


def test_vmap_of_grad_gives_per_sample_gradients():
    w0, xs, ys = arr(3, 2), arr(5, 3), arr(5, 2)

    def run(m, w, x, y):
        model = m.nn.Linear(3, 2, dtype=m.float64)
        params = {"weight": w.T.contiguous(), "bias": m.zeros(2, dtype=m.float64)}

        def loss(p, xi, yi):
            return ((m.func.functional_call(model, p, (xi,)) - yi) ** 2).sum()
        return m.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    check_func(run, w0, xs, ys)


def test_vmap_randomness():
    x = strata.ones(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        strata.vmap(lambda t: t + strata.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        strata.vmap(lambda t: strata.nn.functional.dropout(t, 0.5))(x)
    same = strata.vmap(lambda t: t + strata.rand(3), randomness="same")(x)
    assert all(np.array_equal(same[0].numpy(), row.numpy()) for row in same)
    diff = strata.vmap(lambda t: t + strata.rand(3), randomness="different")(x)
    assert not np.array_equal(diff[0].numpy(), diff[1].numpy())
    assert strata.vmap(lambda t: t * 2)(x).shape == (4, 3)   # no random op: fine in "error"
    for m in (strata, torch):   # the same error class for the same random op
        with pytest.raises(RuntimeError, match="randomness error mode"):
            m.vmap(lambda t, m=m: t + m.rand(3))(m.ones(4, 3))


VMAP_ERRORS = [
    (lambda m, a: m.vmap(m.dot)(a, a[:2]), "same size in the mapped dimension"),
    (lambda m, a: m.vmap(lambda x: x, in_dims=None)(a), "expected `in_dims` to be int"),
    (lambda m, a: m.vmap(lambda x, y: x, in_dims=(None, None))(a, a),
     "at least one Tensor to vmap over"),
    (lambda m, a: m.vmap(lambda x: x, in_dims=2)(a), "-2 <= in_dim < 2"),
    (lambda m, a: m.vmap(lambda x, s: x, in_dims=(0, 0))(a, 1.0),
     "cannot vmap over non-Tensor arguments"),
    (lambda m, a: m.vmap(lambda x: x, in_dims=(0, 0))(a), "not compatible with the structure"),
    (lambda m, a: m.vmap(lambda x: x, in_dims=(1.5,))(a), "in_dim must be either an integer"),
    (lambda m, a: m.vmap(lambda x: x)(), "got no inputs"),
    (lambda m, a: m.vmap(lambda x: x, out_dims="x")(a), "`out_dims` must be an int"),
    (lambda m, a: m.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(a),
     "out_dims is not compatible"),
    (lambda m, a: m.vmap(lambda x: 3.0)(a), "must only return Tensors"),
    (lambda m, a: m.vmap(lambda x: x, out_dims=None)(a), "can not return a BatchedTensor"),
    (lambda m, a: m.vmap(lambda x: x, chunk_size=0)(a), "chunk_size should be None"),
]


@pytest.mark.parametrize("fn, match", VMAP_ERRORS)
def test_vmap_errors_like_torch(fn, match):
    s_err, _ = check_error(fn, arr(3, 2), match=match)
    assert isinstance(s_err, ValueError)


def test_vmap_bad_randomness_flag():
    check_error(lambda m, a: m.vmap(lambda x: x, randomness="sometimes")(a), arr(2),
                match="Only allowed values for randomness")


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4), n=st.integers(1, 3), in_dim=st.integers(-2, 1),
       out_dim=st.integers(-2, 1))
def test_vmap_hypothesis_dims(batch, n, in_dim, out_dim):
    shape = [n + 1, n + 1]
    shape[in_dim] = batch
    check_func(lambda m, a, b: m.vmap(lambda x, y: (x * y).exp()[None].sum(0, keepdim=True)
                                      .expand(2, -1), in_dims=(in_dim, None),
                                      out_dims=out_dim)(a, b),
               arr(*shape), arr(n + 1))


# --- functional_call ----------------------------------------------------------------------------

def _linear(m):
    lin = m.nn.Linear(3, 2, dtype=m.float64)
    with m.no_grad():
        lin.weight.copy_(m.tensor(arr(2, 3) * 0 + 1.0))
        lin.bias.zero_()
    return lin


def test_functional_call_replaces_and_restores():
    def run(m, w, b, x):
        lin = _linear(m)
        out = m.func.functional_call(lin, {"weight": w}, x)   # a single arg, not a tuple
        out2 = m.func.functional_call(lin, ({"weight": w}, {"bias": b}), (x,))
        return out, out2, lin.weight, lin(x), type(lin.weight).__name__ == "Parameter"
    check_func(run, arr(2, 3), arr(2), arr(4, 3))


def test_functional_call_gradients_through_replacement():
    def run(m, w, x):
        lin = _linear(m)
        return m.func.grad(lambda p: m.func.functional_call(lin, p, (x,)).pow(2).sum())(
            {"weight": w, "bias": m.zeros(2, dtype=m.float64)})
    check_func(run, arr(2, 3), arr(4, 3))


def test_functional_call_tied_weights():
    def run(m, w, x):
        a = m.nn.Linear(2, 2, bias=False, dtype=m.float64)
        b = m.nn.Linear(2, 2, bias=False, dtype=m.float64)
        b.weight = a.weight
        with m.no_grad():
            a.weight.copy_(m.tensor([[1.0, -2.0], [0.5, 3.0]]))
        seq = m.nn.Sequential(a, b)
        tied = m.func.functional_call(seq, {"0.weight": w}, (x,))
        untied = m.func.functional_call(seq, {"0.weight": w}, (x,), tie_weights=False)
        return tied, untied, seq(x)   # untied: only layer 0 replaced
    check_func(run, arr(2, 2), arr(3, 2))


FC_ERRORS = [
    (lambda m, x: m.func.functional_call(_linear(m), ({"bias": x}, {"bias": x}), (x,)),
     ValueError, "appeared in multiple dictionaries"),
    (lambda m, x: m.func.functional_call(_linear(m), [{"bias": x}, 3], (x,)), ValueError,
     "to be dictionaries"),
    (lambda m, x: m.func.functional_call(_linear(m), 3, (x,)), ValueError,
     "to be a dict, or a list/tuple of dicts"),
    (lambda m, x: m.func.functional_call(_linear(m), {"bias": x, "extra": x}, (x,),
                                         strict=True), RuntimeError,
     r"Unexpected key\(s\): 'extra'.\n\tMissing key\(s\): 'weight'"),
]


@pytest.mark.parametrize("fn, exc, match", FC_ERRORS)
def test_functional_call_errors_like_torch(fn, exc, match):
    s_err, _ = check_error(fn, arr(2), match=match)
    assert isinstance(s_err, exc)


def test_functional_call_restores_module_after_error():
    lin = _linear(strata)
    weight, bias = lin.weight, lin.bias
    with pytest.raises(RuntimeError):
        strata.func.functional_call(lin, {"weight": strata.ones(5, 5, dtype=strata.float64),
                                          "bias": strata.zeros(2)}, (strata.ones(1, 3),))
    assert lin.weight is weight and lin.bias is bias
