"""Bugs real PyTorch programs found (issue 11 §2), each against PyTorch: shadowed builtins in the
package namespace, NumPy array operands, sparse COO indices, in-place view methods, index errors.
"""

import ast
import builtins
import inspect
import sys
import types
import warnings

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check_outcome
from hypothesis import given
from hypothesis import strategies as st
from strata.ops.op import OpOverload

# --- builtins shadowed by dtypes and ops ---------------------------------------------------------


def test_use_deterministic_algorithms_round_trip():
    for m in (strata, torch):
        m.use_deterministic_algorithms(True)
        assert m.are_deterministic_algorithms_enabled()
        m.use_deterministic_algorithms(True, warn_only=True)
        assert m.is_deterministic_algorithms_warn_only_enabled()
        m.use_deterministic_algorithms(False)
        assert not m.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("mode", [1, "yes", None])
def test_use_deterministic_algorithms_refuses_non_bool(mode):
    err = check_outcome(lambda m: m.use_deterministic_algorithms(mode))
    assert str(err).startswith("_set_deterministic_algorithms(): argument 'mode'")
    assert not strata.are_deterministic_algorithms_enabled()


def _loads_in_function_bodies(tree):
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
            body = fn.body if isinstance(fn.body, list) else [fn.body]
            for stmt in body:
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                            node.id not in params:
                        yield node


def test_no_function_reads_a_builtin_its_module_shadows():
    """``bool``, ``int``, ``max``... are dtypes and functions in strata's namespace (as in
    PyTorch's); a function of that module reading one as Python's builtin is a bug. Modules whose
    shadowing name is an op object (``ops/reductions.py``'s ``sum``) or a function the module
    defines itself (``strata.compile.compile`` calling itself) mean that object."""
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("strata") or not isinstance(module, types.ModuleType):
            continue
        shadowed = {n for n in dir(builtins) if not n.startswith("_") and n in vars(module)
                    and vars(module)[n] is not getattr(builtins, n)
                    and not isinstance(vars(module)[n], (types.ModuleType, OpOverload))
                    and getattr(vars(module)[n], "__module__", None) != name}
        if not shadowed:
            continue
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        found += [f"{name}:{node.lineno} reads {node.id}"
                  for node in _loads_in_function_bodies(ast.parse(source))
                  if node.id in shadowed]
    assert not found, found


# --- NumPy array operands (Note [NumPy operands]) -----------------------------------------------

_OPERATORS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "pow": lambda a, b: a ** b, "eq": lambda a, b: a == b, "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
}
_NP_DTYPES = ["float64", "float32", "int32", "int64", "bool"]


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # torch's __array_wrap__
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the class is what we compare
            return e


def _same_outcome(s, t):
    if isinstance(t, Exception):
        assert type(s) is type(t), f"strata: {s!r}; torch raised {t!r}"
        return
    assert not isinstance(s, Exception), f"strata raised {s!r}; torch returned {t!r}"
    assert isinstance(s, strata.Tensor) == isinstance(t, torch.Tensor), (s, t)
    if isinstance(t, torch.Tensor):
        assert_same(s, t)
    else:
        assert s == t


@given(op=st.sampled_from(sorted(_OPERATORS)), tensor_dtype=st.sampled_from(["float32", "int64"]),
       array_dtype=st.sampled_from(_NP_DTYPES), reflected=st.booleans(),
       zero_dim=st.booleans())
def test_numpy_array_operand(op, tensor_dtype, array_dtype, reflected, zero_dim):
    """``tensor <op> array`` and ``array <op> tensor`` do what PyTorch's do: a tensor computed by
    NumPy's promotion, or TypeError."""
    fn = _OPERATORS[op]
    arr = np.arange(1, 4).astype(array_dtype)
    arr = arr[1] if zero_dim else arr
    arr = np.asarray(arr)
    results = []
    for m in (strata, torch):
        x = m.arange(1, 4).to(getattr(m, tensor_dtype))
        results.append(_outcome(lambda: fn(arr, x) if reflected else fn(x, arr)))
    _same_outcome(*results)


def test_numpy_operand_matmul_and_inplace():
    for fn in (lambda m: m.ones(2, 2) @ np.eye(2), lambda m: np.eye(2) @ m.ones(2, 2),
               lambda m: m.ones(2, 2).__iadd__(np.ones(2)),
               lambda m: m.ones(2, requires_grad=True) * np.ones(2),
               lambda m: m.arange(3.) + np.float64(2)):
        _same_outcome(_outcome(lambda: fn(strata)), _outcome(lambda: fn(torch)))
    x = strata.zeros(3)
    x += np.ones(3)                  # as PyTorch: rebinds x to NumPy's float64 result
    assert x.dtype is strata.float64 and x.tolist() == [1.0, 1.0, 1.0]


def test_numpy_operand_not_equal_is_elementwise():
    """PyTorch 2.13 answers ``tensor != array`` with the Python bool True (its ``__ne__`` gives
    NotImplemented and Python falls back to identity); strata compares elementwise as ``==``
    does. A deliberate difference, documented in README."""
    out = strata.arange(3.) != np.ones(3)
    assert out.tolist() == [True, False, True]


def test_numpy_operand_function_call_is_a_type_error():
    for fn in (lambda m: m.maximum(m.arange(3.), np.ones(3)),
               lambda m: m.add(m.arange(3.), np.ones(3))):
        err = check_outcome(fn)
        assert "numpy.ndarray" in str(err)


# --- sparse COO indices ---------------------------------------------------------------------------

@pytest.mark.parametrize("indices", [
    np.array([[0, 1, 1], [2, 0, 2]], dtype=np.int32), [[0, 1, 1], [2, 0, 2]],
    np.array([[0, 1, 1], [2, 0, 2]], dtype=np.int16), (np.array([0, 1, 1]), np.array([2, 0, 2]))])
def test_sparse_coo_tensor_converts_array_like_indices(indices):
    outs = []
    for m in (strata, torch):
        s = m.sparse_coo_tensor(indices, [1.0, 2.0, 3.0], (2, 3), dtype=m.float64)
        assert s._indices().dtype == m.int64
        outs.append(s.to_dense())
    assert_same(*outs)


def test_sparse_coo_tensor_converts_tensor_indices():
    outs = [m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]], dtype=m.int32), [1.0, 2.0], (2, 2))
            for m in (strata, torch)]
    assert outs[0]._indices().dtype is strata.int64
    assert_same(outs[0].to_dense(), outs[1].to_dense())


# --- in-place view methods ------------------------------------------------------------------------

_INPLACE_VIEW_CALLS = [
    ("t_", ()), ("transpose_", (0, 1)), ("transpose_", (-1, 0)), ("swapdims_", (0, 1)),
    ("swapaxes_", (1, 0)), ("unsqueeze_", (0,)), ("unsqueeze_", (-1,)), ("unsqueeze_", (5,)),
    ("squeeze_", ()), ("squeeze_", (1,)), ("squeeze_", ((0, 1),)), ("squeeze_", (4,)),
    ("transpose_", (0, 3)), ("as_strided_", ((2, 2), (1, 2))), ("as_strided_", ((2,), (1, 1))),
    ("as_strided_", ((4, 4), (4, 1))), ("as_strided_", ((2,), (2,), 1)),
]


@pytest.mark.parametrize("shape", [(2, 3), (3, 1), (2, 1, 3), (4,), ()])
@pytest.mark.parametrize("method,args", _INPLACE_VIEW_CALLS)
def test_inplace_view_method(method, args, shape):
    """Same result (values, shape, strides, identity) or the same error class with the tensor
    untouched."""
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    results = []
    for m in (strata, torch):
        x = m.tensor(data)
        before = (tuple(x.shape), x.stride(), x.storage_offset(), x._version)
        try:
            out = getattr(x, method)(*args)
        except Exception as e:  # noqa: BLE001 - compared below
            assert (tuple(x.shape), x.stride(), x.storage_offset(), x._version) == before
            results.append(e)
            continue
        assert out is x and x._version == before[3] + 1
        results.append((x.clone(), x.stride(), x.storage_offset()))
    s, t = results
    if isinstance(t, Exception) or isinstance(s, Exception):
        assert type(s) is type(t), f"strata: {s!r}; torch: {t!r}"
        if method == "t_":
            assert str(s) == str(t)
        return
    assert_same(s[0], t[0])
    assert s[1:] == t[1:]


@pytest.mark.parametrize("method,args", [("t_", ()), ("unsqueeze_", (1,)), ("squeeze_", ()),
                                         ("transpose_", (1, 0)), ("as_strided_", ((3,), (2,)))])
def test_inplace_view_method_gradients(method, args):
    grads, outs = [], []
    for m in (strata, torch):
        a = m.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
        b = a * 2
        b = b.unsqueeze(1) if method == "squeeze_" else b
        getattr(b, method)(*args)
        w = m.arange(1.0, b.numel() + 1).reshape(b.shape)
        (b * w).sum().backward()
        grads.append(a.grad)
        outs.append(b.detach())
    assert_same(*outs)
    assert_same(*grads)


def test_inplace_view_method_on_a_view_keeps_base_and_gradient():
    grads = []
    for m in (strata, torch):
        a = m.ones(2, 3, requires_grad=True)
        b = a * 2
        v = b[0:1]
        v.t_()
        assert v._base is b and tuple(v.shape) == (3, 1)
        (v * m.arange(1.0, 4.0).reshape(3, 1)).sum().backward()
        grads.append(a.grad)
    assert_same(*grads)


def test_inplace_view_method_on_a_leaf():
    for m in (strata, torch):
        a = m.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            a.t_()
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            m.zeros(2, 3, 4, requires_grad=True).t_()   # the leaf check comes first
        assert tuple(a.shape) == (2, 3)
        with m.no_grad():
            a.t_()
        assert tuple(a.shape) == (3, 2) and a.is_leaf and a.requires_grad


@pytest.mark.parametrize("sizes", [(6,), (2, 2), (4, 5), (0,), (-1, 3), (3, -2)])
def test_resize(sizes):
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for m in (strata, torch):
        x = m.tensor(data)
        try:
            x.resize_(*sizes)
        except Exception as e:  # noqa: BLE001
            assert m is torch or tuple(x.shape) == (2, 3)   # torch 2.13 keeps a negative size
            results.append(e)
            continue
        kept = min(6, x.numel())
        results.append((tuple(x.shape), x.stride(), x.reshape(-1)[:kept].clone()))
    s, t = results
    if isinstance(t, Exception):
        assert type(s) is type(t), f"strata: {s!r}; torch: {t!r}"
        return
    assert s[:2] == (tuple(t[0]), t[1])
    assert_same(s[2], t[2])


def test_resize_as_and_grad_refusal():
    for m in (strata, torch):
        x = m.zeros(2, 3)
        assert x.resize_as_(m.ones(3, 1)) is x and tuple(x.shape) == (3, 1)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            m.zeros(2, requires_grad=True).resize_(4)


# --- out-of-range indices: PyTorch 2.13's exception class and wording ---------------------------

_OUT_OF_RANGE = {
    "index_add_": lambda m, x, i: x.index_add_(0, i(0, 5), m.ones(2, 4)),
    "index_add": lambda m, x, i: x.index_add(0, i(-4), m.ones(1, 4)),
    "index_copy_": lambda m, x, i: x.index_copy_(0, i(0, 5), m.ones(2, 4)),
    "index_fill_": lambda m, x, i: x.index_fill_(0, i(7), 1.0),
    "index_put_": lambda m, x, i: x.index_put_((i(0), i(9)), m.ones(1)),
    "setitem": lambda m, x, i: x.__setitem__(i(3), 1.0),
    "getitem": lambda m, x, i: x[i(-4)],
    "scatter_": lambda m, x, i: x.scatter_(0, i(5).view(1, 1), m.ones(1, 1)),
    "scatter_add_": lambda m, x, i: x.scatter_add_(0, i(5).view(1, 1), m.ones(1, 1)),
    "gather": lambda m, x, i: x.gather(0, i(-1).view(1, 1)),
    "take": lambda m, x, i: x.take(i(-13)),
    "put_": lambda m, x, i: x.put_(i(12), m.ones(1)),
    "embedding": lambda m, x, i: m.nn.functional.embedding(i(3), x),
    "Embedding": lambda m, x, i: m.nn.Embedding(3, 2)(i(-1)),
    "index_select_rows": lambda m, x, i: x.index_select(0, i(3)),
    "index_select_columns": lambda m, x, i: x.index_select(1, i(4)),
    "index_select_1d": lambda m, x, i: x[0].index_select(-1, i(-1)),
    "select": lambda m, x, i: x.select(0, 3),
}


@pytest.mark.parametrize("name", sorted(_OUT_OF_RANGE))
def test_out_of_range_index_errors(name):
    messages = []
    for m in (strata, torch):
        x = m.zeros(3, 4)
        with pytest.raises(Exception) as err:
            _OUT_OF_RANGE[name](m, x, lambda *v: m.tensor(list(v)))
        assert m is torch or not x.any()   # strata writes nothing (torch may write a row)
        messages.append((type(err.value), str(err.value).replace("torch", "strata")))
    assert messages[0][0] is messages[1][0], messages
    assert messages[0][1] == messages[1][1]
