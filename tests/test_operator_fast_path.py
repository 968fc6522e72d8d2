"""Issue 11 §1's per-op shortcuts give what the dispatcher's full path gives, against PyTorch:
Python operators and ``direct_caller`` frontends (``v[3]``, ``x.sum()``) past ``call`` (Note
[Operator fast path]), binary CPU kernels that set NumPy's error state themselves (Note
[One-frame CPU kernels]) and ``linear``'s addmm lane (Note [addmm lane]). Each test also shows
that the shortcut is taken, or that what it must step aside for (a trace, a mode, a new kernel,
inference mode) still sees every call."""

import operator

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error, check_outcome
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.dispatch import dispatcher as DP
from strata.dispatch.library import Library
from strata.dispatch.modes import TorchDispatchMode
from strata.ops import pointwise as P
from strata.ops.op import OpOverload

OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt,
             operator.eq, operator.pow]
DTYPES = ["float32", "float64", "int64", "int32", "bool"]


def _array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 3).astype(dtype)


class _CountCalls:
    """Counts the calls that go through ``call`` (``OpOverload.__call__``) in the block."""

    def __init__(self, monkeypatch):
        self.ops = []
        full = OpOverload.__call__

        def counting(op, *args, **kwargs):
            self.ops.append(op.qualname)
            return full(op, *args, **kwargs)
        monkeypatch.setattr(OpOverload, "__call__", counting)


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(OPERATORS), dtypes=st.tuples(st.sampled_from(DTYPES),
                                                       st.sampled_from(DTYPES)),
       shapes=st.sampled_from([((1,), (1,)), ((3,), (3,)), ((2, 3), (3,)), ((), (2, 2))]),
       other_kind=st.sampled_from(["tensor", "int", "float", "view"]),
       seed=st.integers(0, 2**16))
def test_operators_match_torch(op, dtypes, shapes, other_kind, seed):
    """Every operand kind the operator distinguishes (a tensor, a Python number, a view of a
    plain tensor), repeated so the second call takes the shortcut the first one opened."""
    rng = np.random.default_rng(seed)
    a, b = _array(rng, shapes[0], dtypes[0]), _array(rng, shapes[1], dtypes[1])

    def run(m, x, y):
        if other_kind == "int":
            y = 2
        elif other_kind == "float":
            y = 1.5
        elif other_kind == "view":
            y = m.stack([y, y])[1]
        try:
            first = op(x, y)
        except RuntimeError as exc:   # e.g. pow of negative ints, sub of bools
            return type(exc).__name__
        return first, op(x, y)
    s_out, t_out = run(strata, strata.tensor(a), strata.tensor(b)), \
        run(torch, torch.tensor(a), torch.tensor(b))
    if isinstance(t_out, str):
        assert s_out == t_out
    else:
        assert_same(s_out, t_out, rtol=1e-5, atol=1e-6)


@settings(max_examples=20, deadline=None)
@given(grad=st.sampled_from([(True, False), (False, True), (True, True)]),
       op=st.sampled_from([operator.add, operator.sub, operator.mul, operator.truediv]),
       seed=st.integers(0, 2**16))
def test_recorded_operators_match_torch(grad, op, seed):
    """Operands that require grad (or are views of one that does) take the autograd fallback
    past ``call``: same node names, values and gradients as PyTorch."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(3).astype(np.float32), rng.random(3).astype(np.float32) + 0.5
    results = []
    for m in (strata, torch):
        x, y = m.tensor(a, requires_grad=grad[0]), m.tensor(b, requires_grad=grad[1])
        xv = x.unsqueeze(0)[0]   # a view whose base requires grad (or not)
        out = op(op(x, y), xv)
        out.sum().backward()
        results.append((out.detach(), out.grad_fn.name(), x.grad, y.grad))
    (s_out, s_name, *s_grads), (t_out, t_name, *t_grads) = results
    assert s_name == t_name
    assert_same(s_out, t_out, rtol=1e-5, atol=1e-6)
    for sg, tg in zip(s_grads, t_grads, strict=True):
        assert (sg is None) == (tg is None)
        if tg is not None:
            assert_same(sg, tg, rtol=1e-5, atol=1e-6)


def test_plain_and_recorded_operators_skip_call(monkeypatch):
    x, y = strata.ones(2), strata.ones(2)
    xg = strata.ones(2, requires_grad=True)
    v = strata.ones(4, 4)
    for _ in range(2):   # the first call of a key set fills the map through ``call``
        x + y, xg * y, v[1], v.sum()
    calls = _CountCalls(monkeypatch)
    x + y, x * 2.0, xg * y, v[1], v.sum()
    assert calls.ops == []
    assert (xg * y).grad_fn.name() == "MulBackward0"


def test_numpy_operand_still_defers():
    x = strata.ones(2)
    assert x.__add__(np.ones(2)) is NotImplemented
    with pytest.raises(TypeError):
        np.ones(2) + x   # as in PyTorch (Note [NumPy operands])


def test_bad_shapes_raise_torch_error_and_leave_operands_untouched():
    a, b = np.ones(3, np.float32), np.ones(4, np.float32)
    for _ in range(2):   # the lane is open after the first same-dtype call
        check(lambda m, x, y: x + y, a, a)
        check_error(lambda m, x, y: x + y, a, b, match="must match the size")
        check_error(lambda m, x, y: x.__iadd__(y), a, b)


def test_a_mode_sees_operators():
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.qualname)
            return func(*args, **(kwargs or {}))
    x = strata.ones(2)
    x + x, x[0], x.sum()   # warm the map for the key set without the mode
    with Log():
        x + x
        x[0]
        x.sum()
    assert seen == ["aten::add.Tensor", "aten::select.int", "aten::sum.dim_IntList"]


def test_inference_mode_and_no_grad_results():
    x = strata.ones(2, requires_grad=True)
    with strata.inference_mode():
        out = x + 1
        assert out.is_inference() and not out.requires_grad
    with strata.no_grad():
        assert (x * x).grad_fn is None and (x[0]).grad_fn is None
    assert (x * x).grad_fn is not None


def test_a_new_kernel_replaces_the_shortcut():
    """A registration empties the map: the operator reaches the new kernel at once."""
    x = strata.ones(2)
    x + x
    lib = Library("aten", "IMPL")
    lib.impl("add.Tensor", lambda ks, *args: strata.full((2,), 7.0), "AutogradCPU",
             with_keyset=True)
    try:
        assert (x + x).tolist() == [7.0, 7.0]
    finally:
        lib._destroy()
    assert (x + x).tolist() == [2.0, 2.0]


def test_a_trace_sees_the_shortcut_calls():
    """While a trace is on, operators and direct callers go through the traced ``call``, named
    after the frontend that made it; after it, the shortcut is back."""
    x, v = strata.ones(2), strata.ones(3, 3)
    x + x, v[0], v.sum()
    for fn, op, caller in [(lambda: x + x, "aten::add.Tensor", "Tensor.__add__"),
                           (lambda: v[0], "aten::select.int", "_select"),
                           (lambda: v.sum(), "aten::sum.dim_IntList", "sum")]:
        trace = strata.explain(fn)
        calls = [e for e in trace.events if e.layer == "dispatch" and e.fields["kind"] == "call"]
        assert [(e.name, e.fields["caller"]) for e in calls] == [(op, caller)]
    assert not P.add._operator_entries   # emptied when the trace stopped
    x + x
    assert P.add._operator_entries       # refilled by the next untraced call


def test_direct_caller_refuses_ops_it_cannot_serve():
    with pytest.raises(ValueError, match="add.Tensor"):
        DP.direct_caller(P.add)          # two tensors
    with pytest.raises(ValueError, match="neg"):
        DP.direct_caller(P.neg)          # no argument after the tensor


def test_select_and_sum_match_torch():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for _ in range(2):
        check(lambda m, x: (x[1], x[-1], x.sum(), m.sum(x, 0), x.sum(dtype=m.float64)), a)
        check_error(lambda m, x: x[3], a, match="out of bounds")
    for m in (strata, torch):   # grad through the direct callers, as PyTorch records it
        x = m.tensor(a, requires_grad=True)
        assert x[1].grad_fn.name() == "SelectBackward0"
        assert x.sum().grad_fn.name() == "SumBackward0"


def test_binary_kernel_translates_allocation_failures():
    """The binary kernel, registered without ``cpu_kernel``'s wrapper, still raises PyTorch's
    allocator error (NumPy refuses a 128 GiB result without touching memory)."""
    small = strata.ones(1, dtype=strata.float64)
    small + small   # opens the float64 lane
    a, b = strata.ones((1 << 17, 1), dtype=strata.float64), strata.ones((1, 1 << 17),
                                                                       dtype=strata.float64)
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory"):
        a + b


# --- Note [addmm lane] ---------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 4), k=st.integers(1, 5), out=st.integers(1, 4),
       dtype=st.sampled_from(["float32", "float64", "float16"]),
       bias=st.sampled_from(["vector", "row", "full", "scalar", "none"]),
       weight_layout=st.sampled_from(["contiguous", "transposed", "strided"]),
       grad=st.booleans(), seed=st.integers(0, 2**16))
def test_linear_matches_torch(n, k, out, dtype, bias, weight_layout, grad, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(dtype)
    w = rng.standard_normal((out, k)).astype(dtype)
    bias_shape = {"vector": (out,), "row": (1, out), "full": (n, out), "scalar": (),
                  "none": None}[bias]
    b = None if bias_shape is None else rng.standard_normal(bias_shape).astype(dtype)
    results = []
    for m in (strata, torch):
        weight = m.tensor(w)
        if weight_layout == "transposed":
            weight = m.tensor(np.ascontiguousarray(w.T)).t()
        elif weight_layout == "strided":
            weight = m.tensor(np.repeat(w, 2, axis=1))[:, ::2]
        weight.requires_grad_(grad)
        bias_t = None if b is None else m.tensor(b, requires_grad=grad)
        y = m.nn.functional.linear(m.tensor(x), weight, bias_t)
        grads = ()
        if grad and n:
            y.sum().backward()
            grads = (weight.grad, None if bias_t is None else bias_t.grad)
        results.append((y.detach(), grads))
    tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    assert_same(results[0], results[1], rtol=tol, atol=tol)


def test_addmm_lane_leaves_other_scalars_to_the_full_path():
    rng = np.random.default_rng(0)
    bias, a, b = (rng.standard_normal(s).astype(np.float32) for s in ((2,), (3, 4), (4, 2)))
    for beta, alpha in [(1, 1), (2, 1), (1, 0.5), (0, 1), (1.0, 1.0), (True, True)]:
        check(lambda m, s, x, y, beta=beta, alpha=alpha: m.addmm(s, x, y, beta=beta,
                                                                  alpha=alpha),
              bias, a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shapes, match", [
    (((2,), (3, 4), (5, 2)), "cannot be multiplied"),
    (((3,), (3, 4), (4, 2)), "expand"),
    (((4, 2), (3, 4), (4, 2)), "expand"),
    (((2,), (4,), (4, 2)), "must be a matrix"),
])
def test_addmm_lane_errors_match_torch(shapes, match):
    arrays = [np.ones(s, np.float32) for s in shapes]
    for _ in range(2):
        check(lambda m, s, x, y: m.addmm(s, x, y), np.ones(2, np.float32),
              np.ones((3, 4), np.float32), np.ones((4, 2), np.float32))
        check_error(lambda m, s, x, y: m.addmm(s, x, y), *arrays, match=match)
    check_error(lambda m, s, x, y: m.addmm(s, x, y), np.ones(2, np.float32),
                np.ones((3, 4), np.float64), np.ones((4, 2), np.float32), match="same dtype")


# --- Note [Views over the base's array] (transposes) ------------------------------------------

@pytest.mark.parametrize("make", [
    lambda x: x.t(), lambda x: x.transpose(0, 1), lambda x: x.transpose(-1, -2),
    lambda x: x.transpose(0, 0), lambda x: x.transpose(1, 1), lambda x: x[1:].t(),
    lambda x: x[:, ::2].t(), lambda x: x.t().t(), lambda x: x[0].t(),
])
def test_transposes_match_torch_and_share_memory(make):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(lambda m, x: make(x), a, check_stride=True)
    x = strata.tensor(a)
    view = make(x)
    x.add_(1)   # the view's array, made at once or later, sees the base's memory
    np.testing.assert_array_equal(view.numpy(), make(torch.tensor(a + 1)).numpy())


def test_a_transposed_matrix_gets_its_array_at_once():
    x = strata.ones(2, 3)
    assert x.t()._array is not None and x.t()._array.base is x._array
    same = x.transpose(0, 0)   # not a swap: the same array, still over the base's memory
    assert same._array is not None and np.shares_memory(same._array, x._array)


# --- Note [Binary fast lane]: keys of (dtype, extra arguments) ---------------------------------

@pytest.mark.parametrize("dtype", ["int64", "float32", "uint8"])
@pytest.mark.parametrize("alpha", [1.0, True, 2.5, -1])
def test_an_alpha_equal_to_the_lanes_int_is_checked(dtype, alpha):
    """1.0 and True hash like the int 1 whose lane is open: they must still get the checks (an
    integer tensor refuses a float or bool alpha), out of place and in place."""
    a = np.arange(1, 4).astype(dtype)
    for _ in range(2):   # the int-alpha lanes of add/add_ and sub are open after the first pass
        check(lambda m, x, y: (x + y, x - y, x.clone().add_(y)), a, a)
    check_error_or_same = [
        lambda m, x, y: m.add(x, y, alpha=alpha),
        lambda m, x, y: m.sub(x, y, alpha=alpha),
        lambda m, x, y: x.clone().add_(y, alpha=alpha),
    ]
    for fn in check_error_or_same:
        check_outcome(fn, a, a)
