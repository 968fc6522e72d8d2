"""dtypes and type promotion against PyTorch: ``promote_types``/``can_cast`` for every pair,
``result_type`` and operator result dtypes over tensors, 0-dim tensors and Python scalars,
in-place cast errors, ``finfo``/``iinfo``, the default dtype."""

import itertools

import numpy as np
import pytest
import strata
import torch
from helpers import DTYPE_PAIRS, check_outcome, dtype_name
from hypothesis import given
from hypothesis import strategies as st

NAMES = sorted(DTYPE_PAIRS)
PAIRS = list(itertools.product(NAMES, NAMES))


@pytest.fixture(autouse=True)
def restore_default_dtype():
    yield
    strata.set_default_dtype(strata.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_types_and_can_cast(a, b):
    (sa, ta), (sb, tb) = DTYPE_PAIRS[a], DTYPE_PAIRS[b]
    assert dtype_name(strata.promote_types(sa, sb)) == dtype_name(torch.promote_types(ta, tb))
    assert strata.can_cast(sa, sb) == torch.can_cast(ta, tb)


def test_promotion_is_symmetric_and_idempotent():
    for a, b in PAIRS:
        sa, sb = DTYPE_PAIRS[a][0], DTYPE_PAIRS[b][0]
        assert strata.promote_types(sa, sb) is strata.promote_types(sb, sa)
        assert strata.promote_types(sa, sa) is sa


# --- operands: dimensioned tensors, 0-dim tensors, Python scalars --------------------------------

SCALARS = {"bool": True, "int": 3, "float": 2.5}


@st.composite
def operand(draw):
    kind = draw(st.sampled_from(["tensor", "zero_dim", "scalar"]))
    if kind == "scalar":
        return ("scalar", draw(st.sampled_from(sorted(SCALARS))))
    return (kind, draw(st.sampled_from(NAMES)))


def make(m, spec):
    kind, what = spec
    if kind == "scalar":
        return SCALARS[what]
    dtype = getattr(m, what)
    return m.ones((2,) if kind == "tensor" else (), dtype=dtype)


def has_tensor(*specs):
    return any(kind != "scalar" for kind, _ in specs)


@given(operand(), operand())
def test_result_type(a, b):
    if not has_tensor(a, b):
        return
    check_outcome(lambda m: m.result_type(make(m, a), make(m, b)))


@given(operand(), operand(), st.sampled_from(["float32", "float64"]))
def test_result_type_follows_default_dtype(a, b, default):
    if not has_tensor(a, b):
        return
    strata.set_default_dtype(getattr(strata, default))
    torch.set_default_dtype(getattr(torch, default))
    check_outcome(lambda m: m.result_type(make(m, a), make(m, b)))


BINARY = {
    "add": lambda x, y: x + y, "mul": lambda x, y: x * y, "truediv": lambda x, y: x / y,
    "floordiv": lambda x, y: x // y, "lt": lambda x, y: x < y, "eq": lambda x, y: x == y,
    "sub": lambda x, y: x - y, "pow": lambda x, y: x ** y,
}


@given(operand(), operand(), st.sampled_from(sorted(BINARY)))
def test_operator_result_dtypes(a, b, op):
    if a[0] == "scalar":  # the tensor goes first so Python dispatches to it
        a, b = b, a
    if a[0] == "scalar":
        return
    fn = BINARY[op]
    check_outcome(lambda m: fn(make(m, a), make(m, b)).dtype)


@pytest.mark.parametrize("expr", [
    "m.ones(2, dtype=m.int32).__iadd__(2.5)", "m.ones(2, dtype=m.int32).__imul__(m.ones(2))",
    "m.ones(2, dtype=m.bool).__iadd__(1)", "m.ones(2).__iadd__(m.ones(2, dtype=m.float64))",
    "m.ones(2, dtype=m.int8).__iadd__(m.ones(2, dtype=m.int64))",
    "m.ones(2, dtype=m.int32).__itruediv__(2)", "m.ones(2, dtype=m.int64).__iadd__(m.tensor(2.5))",
    "m.ones(2, dtype=m.uint8).__imul__(m.tensor([2], dtype=m.int8))",
    "m.ones(2, dtype=m.float16).__iadd__(m.ones(2, dtype=m.float64))",
    "m.ones(2, dtype=m.bool).__ior__(m.ones(2, dtype=m.int32))",
    "m.add(m.ones(2, dtype=m.int32), 1.5, out=m.empty(2, dtype=m.int64))",
    "m.ones(2, dtype=m.int64).add_(m.ones(2, dtype=m.bfloat16))",
])
def test_inplace_cast_rules(expr):
    check_outcome(lambda m: eval(expr, {"m": m}))


def test_inplace_cast_error_wording():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x = strata.ones(2, dtype=strata.int64)
        x += strata.ones(2)
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                           "output type Int"):
        x = strata.ones(2, dtype=strata.int32)
        x *= strata.ones(2, dtype=strata.float64)


# --- finfo / iinfo -------------------------------------------------------------------------------

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    s, t = strata.finfo(DTYPE_PAIRS[name][0]), torch.finfo(DTYPE_PAIRS[name][1])
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(s, attr) == getattr(t, attr), attr
    assert repr(s) == repr(t)
    assert s == strata.finfo(DTYPE_PAIRS[name][0])


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    s, t = strata.iinfo(DTYPE_PAIRS[name][0]), torch.iinfo(DTYPE_PAIRS[name][1])
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(s, attr) == getattr(t, attr), attr
    assert repr(s) == repr(t)


@pytest.mark.parametrize("expr", ["repr(m.finfo())", "m.finfo().bits", "m.finfo(m.int32)",
                                  "m.iinfo(m.float32)", "m.finfo('float32')",
                                  "hash(m.finfo(m.float32))"])
def test_info_errors_and_defaults(expr):
    check_outcome(lambda m: eval(expr, {"m": m}))


def test_iinfo_of_bool_answers():
    # PyTorch raises TypeError; strata's range checks ask for the limits of every integral dtype
    info = strata.iinfo(strata.bool)
    assert (info.min, info.max, info.bits) == (0, 1, 8)


def test_finfo_follows_default_dtype():
    strata.set_default_dtype(strata.float64)
    assert strata.finfo().bits == 64


# --- dtype objects and the default dtype ---------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes(name):
    s, t = DTYPE_PAIRS[name]
    assert s.is_floating_point == t.is_floating_point
    assert s.is_signed == t.is_signed
    assert s.itemsize == t.itemsize
    assert s.is_complex == t.is_complex
    assert repr(s) == repr(t).replace("torch.", "strata.")
    assert str(s) == str(t).replace("torch.", "strata.")
    assert s.to_real() is s
    assert pickle_round_trip(s) is s


def pickle_round_trip(obj):
    import pickle
    return pickle.loads(pickle.dumps(obj))


def test_dtype_aliases_and_class():
    assert strata.float is strata.float32 and strata.double is strata.float64
    assert strata.half is strata.float16 and strata.long is strata.int64
    assert strata.int is strata.int32 and strata.short is strata.int16
    assert isinstance(strata.float32, strata.dtype)
    assert repr(strata.dtype) == "<class 'strata.dtype'>"
    assert strata.float32 != strata.float64 and hash(strata.float32) == hash(strata.float32)


@pytest.mark.parametrize("expr", ["m.set_default_dtype(m.int32)", "m.set_default_dtype(float)",
                                  "m.set_default_dtype(m.bool)", "m.float32 < m.float64"])
def test_dtype_errors(expr):
    check_outcome(lambda m: eval(expr, {"m": m}))


@pytest.mark.parametrize("name", FLOATS)
def test_set_default_dtype(name):
    s, t = DTYPE_PAIRS[name]
    strata.set_default_dtype(s)
    torch.set_default_dtype(t)
    for expr in ("m.get_default_dtype()", "m.tensor([1.5]).dtype", "m.zeros(2).dtype",
                 "(m.ones(2, dtype=m.int32) / 2).dtype", "(m.ones(2, dtype=m.int32) + 1.5).dtype",
                 "m.result_type(m.ones(2, dtype=m.int64), 1.0)", "m.arange(1.5).dtype",
                 "m.full((1,), 2.0).dtype"):
        check_outcome(lambda m: eval(expr, {"m": m}))


def test_python_types_as_dtype_arguments():
    for expr in ("m.ones(2, dtype=float)", "m.ones(2, dtype=int)", "m.ones(2, dtype=bool)",
                 "m.ones(2).to(float)", "m.ones(2).to(int)", "m.tensor([1], dtype=float)"):
        check_outcome(lambda m: eval(expr, {"m": m}))


def test_from_numpy_dtype_round_trip():
    for name in NAMES:
        s = DTYPE_PAIRS[name][0]
        assert strata.tensor(np.zeros(1, s.np)).dtype is s
