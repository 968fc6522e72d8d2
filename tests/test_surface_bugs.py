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
    shadowing name is an op object (``ops/reductions.py``'s ``sum``) mean the op."""
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("strata") or not isinstance(module, types.ModuleType):
            continue
        shadowed = {n for n in dir(builtins) if not n.startswith("_") and n in vars(module)
                    and vars(module)[n] is not getattr(builtins, n)
                    and not isinstance(vars(module)[n], (types.ModuleType, OpOverload))}
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
        check_outcome(fn)


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
