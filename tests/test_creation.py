"""Tensor creation against PyTorch: ``tensor()`` inference and errors, NumPy/DLPack sharing,
factories with every signature, ``*_like``, ``Tensor.new_*``, legacy constructors."""

import warnings

import numpy as np
import pytest
import strata
import torch
from helpers import DTYPE_PAIRS, assert_same, check, check_outcome
from hypothesis import given
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="To copy construct from a tensor")


@pytest.fixture(autouse=True)
def restore_default_dtype():
    yield
    strata.set_default_dtype(strata.float32)
    torch.set_default_dtype(torch.float32)


def cases(*exprs):
    return [pytest.param(e, id=e) for e in exprs]


def run(expr):
    """Evaluate ``expr`` with ``m`` bound to each library and compare outcomes."""
    return check_outcome(lambda m: eval(expr, {"m": m, "np": np}))


# --- tensor(): shapes, dtype inference, conversion, errors ---------------------------------------

@pytest.mark.parametrize("expr", cases(
    "m.tensor([1, 2, 3])", "m.tensor([1, 2.5])", "m.tensor([True, 2])", "m.tensor([True, False])",
    "m.tensor(3)", "m.tensor(3.0)", "m.tensor(True)", "m.tensor(-0.0)", "m.tensor([])",
    "m.tensor([[]])", "m.tensor([[], []])", "m.tensor([[[]]])", "m.tensor([[], [1]])",
    "m.tensor(((1, 2), (3, 4)))", "m.tensor([[1, 2], (3, 4)])", "m.tensor(range(5))",
    "m.tensor([range(2), (3, 4)])", "m.tensor(m.Size([2, 3]))", "m.tensor(bytearray(b'ab'))",
    "m.tensor([[1.0, 2], [3, True]])", "m.tensor([True, 1.5])", "m.tensor(2 ** 63 - 1)",
    "m.tensor(-2 ** 63)", "m.tensor([1.5, 2 ** 63])", "m.tensor([float('nan'), float('inf')])",
))
def test_tensor_from_python_data(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.tensor(np.float32(2.5))", "m.tensor(np.int16(2))", "m.tensor(np.bool_(True))",
    "m.tensor(np.float16(2.5))", "m.tensor([np.float64(1.5), 2])", "m.tensor([np.float32(1), 3])",
    "m.tensor([np.int32(1), np.int32(2)])", "m.tensor([np.float16(1), 2.0])",
    "m.tensor([np.int8(1), np.int16(3)])", "m.tensor([np.uint8(1), np.int8(1)])",
    "m.tensor([np.uint8(1), True])", "m.tensor([np.int8(1), 300])",
    "m.tensor([np.float32(1), np.float64(3)])", "m.tensor(np.array(5))",
    "m.tensor(np.array([1, 2], dtype=np.int32))", "m.tensor(np.array([1.0, 2.0]))",
    "m.tensor(np.array([]))", "m.tensor(np.zeros((2, 3))[:, ::2])",
    "m.tensor([np.array([1, 2]), np.array([3, 4])])", "m.tensor([np.array([1, 2]), [3, 4.5]])",
    "m.tensor(np.zeros((3, 2)).T).stride()", "m.tensor(np.array([[1, 2], [3, 4]]), "
    "dtype=m.float16)",
))
def test_tensor_from_numpy_values(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.tensor([m.tensor(1.5), m.tensor(2)])", "m.tensor([m.tensor(1.5, dtype=m.float64), 1])",
    "m.tensor([m.tensor([1.5]), m.tensor([2.0])])", "m.tensor([m.tensor(True), 3])",
    "m.tensor([m.tensor(1, dtype=m.int8), 3])", "m.tensor([1, m.tensor(2.5)])",
    "m.tensor([m.tensor(1, dtype=m.int8), m.tensor(3, dtype=m.int16)])",
    "m.tensor([[1, 2], m.tensor([3, 4])])", "m.tensor(m.tensor([1, 2]))",
    "m.tensor(m.tensor([1, 2]), dtype=m.float64)", "m.tensor([m.tensor(True)], dtype=m.int64)",
    "m.tensor(m.tensor([1.0, 2.0], requires_grad=True)).requires_grad",
    "m.tensor(m.tensor([1.0, 2.0]), requires_grad=True).requires_grad",
))
def test_tensor_from_tensors(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.tensor([1, 2], dtype=m.float64)", "m.tensor([1.7, -2.7], dtype=m.int32)",
    "m.tensor([1, 0, 2], dtype=m.bool)", "m.tensor([1.5, 2.5], dtype=m.bfloat16)",
    "m.tensor([[1, 2]], dtype=m.uint8)", "m.tensor(-1, dtype=m.uint8)",
    "m.tensor([-255], dtype=m.uint8)", "m.tensor(3.7, dtype=m.uint8)",
    "m.tensor(2.5, dtype=m.bool)", "m.tensor(True, dtype=m.float32)",
    "m.tensor(float('nan'), dtype=m.bool)", "m.tensor(2 ** 70, dtype=m.bool)",
    "m.tensor(1e40, dtype=m.float32)", "m.tensor(1e40, dtype=m.float16)",
    "m.tensor(1e300, dtype=m.bfloat16)", "m.tensor(2 ** 64, dtype=m.float32)",
    "m.tensor(np.float64(1e300), dtype=m.float32)", "m.tensor(np.array([300]), dtype=m.uint8)",
    "m.tensor([np.int64(5)], dtype=m.uint8)", "m.tensor([1.5, 200], dtype=m.uint8)",
    "m.tensor([True, 2.5], dtype=m.int8)", "m.tensor([0.1, 1 / 3], dtype=m.float16)",
    "m.tensor([1 + 2 ** -11 + 2 ** -40], dtype=m.float16)",
    "m.tensor([1 + 2 ** -8 + 2 ** -40], dtype=m.bfloat16)",
    "m.tensor(np.array([1 + 2 ** -11 + 2 ** -40]), dtype=m.float16)",
    "m.tensor([[True, False]], dtype=m.float64)", "m.tensor([[1, 2]], dtype=float)",
    "m.tensor([[1, 2]], dtype=int)", "m.tensor([[1, 2]], dtype=bool)",
    "m.tensor([], dtype=m.int32)", "m.tensor([[1, 2]], dtype=m.float32, device='meta')",
    "m.tensor([[1, [2]]], device='meta')",
))
def test_tensor_with_dtype(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.tensor([[1, 2], [3]])", "m.tensor([[1], [2, 3]])", "m.tensor([[1, 2], [3, 4, 5]])",
    "m.tensor([[1], []])", "m.tensor([[[1, 2]], [[3, 4], [5, 6]]])", "m.tensor([[1, 2], 3])",
    "m.tensor([1, [2, 3]])", "m.tensor([1.5, [2, 3]])", "m.tensor([[1, 2], [3, [4]]])",
    "m.tensor('abc')", "m.tensor(b'ab')", "m.tensor(['a'])", "m.tensor([np.str_('a')])",
    "m.tensor([[1, 2], 'ab'])", "m.tensor(None)", "m.tensor([None])", "m.tensor([None, 1])",
    "m.tensor([[1, 2], None])", "m.tensor({1: 2})", "m.tensor(2 ** 63)", "m.tensor([2 ** 64])",
    "m.tensor(-2 ** 63 - 1)", "m.tensor(300, dtype=m.uint8)", "m.tensor([300], dtype=m.uint8)",
    "m.tensor([-256], dtype=m.uint8)", "m.tensor(-129, dtype=m.int8)",
    "m.tensor(255, dtype=m.int8)", "m.tensor(1e300, dtype=m.int64)",
    "m.tensor(-3.7, dtype=m.uint8)", "m.tensor(300.5, dtype=m.uint8)",
    "m.tensor([-0.5], dtype=m.uint8)", "m.tensor([255.5], dtype=m.uint8)",
    "m.tensor([1.5, 300], dtype=m.uint8)", "m.tensor(float('nan'), dtype=m.int64)",
    "m.tensor([float('inf')], dtype=m.int32)", "m.tensor(2 ** 1100, dtype=m.float32)",
    "m.tensor(1j, dtype=m.float32)", "m.tensor([np.float32(1.5)], dtype=m.int64)",
    "m.tensor([np.bool_(True), 2])", "m.tensor(np.bool_(True), dtype=m.int64)",
    "m.tensor([m.tensor(1.5)], dtype=m.int64)", "m.tensor([m.tensor([1.0, 2.0])])",
    "m.tensor([m.tensor([1, 2]), m.tensor([3, 4])])", "m.tensor([m.tensor([[1, 2]])])",
    "m.tensor([np.array(1.5), 2])", "m.tensor(np.array([1, 2])[::-1])",
    "m.tensor(np.array(['a']))", "m.tensor([1, 2], requires_grad=True)",
    "m.tensor(np.array([1, 2]), requires_grad=True)", "m.tensor([[1, 2]], dtype='float')",
))
def test_tensor_errors(expr):
    run(expr)


def test_tensor_of_a_tensor_warns_and_copies():
    src = strata.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="sourceTensor.detach"):
        out = strata.tensor(src)
    out[0] = 5.0
    assert src.tolist() == [1.0, 2.0]


def test_tensor_from_data_is_a_copy():
    arr = np.array([1.0, 2.0])
    t = strata.tensor(arr)
    arr[0] = 9.0
    assert t.tolist() == [1.0, 2.0]


def test_complex_input_makes_complex_tensors():
    for data in (1 + 2j, [1, 2j], np.array([1 + 1j])):
        check(lambda m, d=data: m.tensor(d))
    check(lambda m: m.full((2,), 1j))


def test_unsupported_numpy_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="numpy.uint16"):
        strata.tensor(np.array([1, 2], dtype=np.uint16))


PY_LEAVES = st.one_of(st.booleans(), st.integers(-2 ** 40, 2 ** 40),
                      st.floats(allow_nan=False, width=32))


@st.composite
def nested(draw):
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim))
    flat = draw(st.lists(PY_LEAVES, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))

    def build(dims, items):
        if not dims:
            return items.pop()
        return [build(dims[1:], items) for _ in range(dims[0])]
    return build(shape, flat[::-1])


@given(nested(), st.sampled_from([None, "float64", "float16", "int32", "bool"]))
def test_tensor_inference_property(data, dtype):
    check_outcome(lambda m: m.tensor(data, dtype=None if dtype is None else getattr(m, dtype)))


@given(nested())
def test_default_dtype_drives_float_inference(data):
    strata.set_default_dtype(strata.float64)
    torch.set_default_dtype(torch.float64)
    check_outcome(lambda m: m.tensor(data))


def test_default_dtype_effects():
    strata.set_default_dtype(strata.float64)
    torch.set_default_dtype(torch.float64)
    for expr in ("m.tensor([1.5])", "m.tensor([1, 2])", "m.zeros(2)", "m.ones(2, 3)",
                 "m.empty(2).dtype", "m.arange(0.5, 2)", "m.arange(3)", "m.full((2,), 1.5)",
                 "m.full((2,), 1)", "m.linspace(0, 1, 3)", "m.eye(2)", "m.scalar_tensor(3)",
                 "m.rand(2).dtype", "m.randn(2).dtype", "m.tensor([])", "m.get_default_dtype()",
                 "m.Tensor([1, 2])", "m.logspace(0, 1, 3)"):
        run(expr)


# --- NumPy and DLPack: sharing memory both ways --------------------------------------------------

def test_from_numpy_shares_memory_both_ways():
    arr = np.arange(6.0).reshape(2, 3)
    t = strata.from_numpy(arr)
    arr[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t.add_(1)
    assert arr[1, 2] == 6.0
    assert t.data_ptr() == arr.ctypes.data
    strided = strata.from_numpy(arr.T)
    assert strided.stride() == (1, 3)
    strided.mul_(0)
    assert not arr.any()


@pytest.mark.parametrize("dtype", sorted(set(DTYPE_PAIRS) - {"bfloat16"}))
def test_from_numpy_keeps_dtype(dtype):
    arr = np.arange(4).astype(dtype)
    check_outcome(lambda m: m.from_numpy(arr))


@pytest.mark.parametrize("expr", cases(
    "m.from_numpy([1, 2])", "m.from_numpy(np.zeros(3, dtype='>f4'))",
    "m.from_numpy(np.zeros(3)[::-1])", "m.from_numpy(np.zeros((3, 2))[:, 1]).stride()",
    "m.from_numpy(np.zeros((3, 2))[:, 1]).storage_offset()", "m.from_numpy(np.array(5))",
    "m.from_numpy(np.zeros((0, 3)))", "m.from_numpy(np.zeros(4, np.float32)[1:])",
    "m.from_numpy(np.broadcast_to(np.arange(3), (2, 3))).stride()",
    "m.from_numpy(np.zeros(4, np.float32).view(np.dtype([('a', np.float32)])))",
))
def test_from_numpy_cases(expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(expr)


def test_readonly_arrays_warn_and_still_read():
    arr = np.arange(3.0)
    arr.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = strata.from_numpy(arr)
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_as_tensor_shares_when_it_can():
    arr = np.arange(3)
    t = strata.as_tensor(arr)
    assert t.data_ptr() == arr.ctypes.data
    converted = strata.as_tensor(arr, dtype=strata.float32)
    converted[0] = 7
    assert arr[0] == 0
    src = strata.ones(2)
    assert strata.as_tensor(src) is src
    assert strata.as_tensor(src, dtype=strata.float64).dtype is strata.float64
    for expr in ("m.as_tensor([1, 2])", "m.as_tensor([1, 2], dtype=m.float16)",
                 "m.as_tensor(np.array([1, 2]), dtype=m.float16)", "m.as_tensor(3.5)",
                 "m.as_tensor(np.float64(3.5))", "m.as_tensor(np.array([1, 2])[::-1])",
                 "m.as_tensor(m.tensor([1, 2]), dtype=m.float16)"):
        run(expr)


def test_asarray_aliasing_rules():
    arr = np.zeros(3)
    t = strata.asarray(arr)
    t[0] = 5
    assert arr[0] == 5
    copied = strata.asarray(arr, copy=True)
    copied[1] = 5
    assert arr[1] == 0
    src = strata.ones(2)
    assert strata.asarray(src) is src
    assert strata.asarray(src, copy=True) is not src
    marked = strata.asarray(src, requires_grad=True)
    assert marked is src and src.requires_grad
    for expr in ("m.asarray([1.5, 2])", "m.asarray([np.float64(1.5)])", "m.asarray(3)",
                 "m.asarray(3.5)", "m.asarray(np.array([1.5]))",
                 "m.asarray([m.tensor(1.0), m.tensor(2.0)])", "m.asarray([1, 2], copy=False)",
                 "m.asarray(m.ones(2), dtype=m.float64, copy=False)",
                 "m.asarray(m.ones(2), dtype=m.float64)",
                 "m.asarray(m.ones(2), device='meta', copy=False)"):
        run(expr)


def test_dlpack_round_trips():
    arr = np.arange(6.0).reshape(2, 3)
    t = strata.from_dlpack(arr)
    t[0, 0] = 42.0
    assert arr[0, 0] == 42.0
    back = np.from_dlpack(t)
    back[1, 1] = -1.0
    assert t[1, 1].item() == -1.0
    transposed = strata.from_dlpack(arr.T)
    assert transposed.stride() == (1, 3)
    assert np.array_equal(np.from_dlpack(strata.tensor([True, False])), [True, False])
    # with PyTorch, both directions share memory too
    tt = torch.from_dlpack(t)
    tt[0, 1] = 9.0
    assert t[0, 1].item() == 9.0
    st_ = strata.from_dlpack(torch.arange(4))
    assert st_.tolist() == [0, 1, 2, 3] and st_.dtype is strata.int64
    capsule = np.arange(3).__dlpack__()
    assert strata.from_dlpack(capsule).tolist() == [0, 1, 2]


def test_dlpack_errors():
    with pytest.raises(BufferError, match="require gradient"):
        strata.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(ValueError, match="meta"):
        strata.ones(2, device="meta").__dlpack_device__()
    run("m.from_dlpack([1, 2])")
    assert strata.ones(2).__dlpack_device__() == torch.ones(2).__dlpack_device__()


# --- factories -----------------------------------------------------------------------------------

@pytest.mark.parametrize("expr", cases(
    "m.zeros(2, 3)", "m.zeros((2, 3))", "m.zeros([2, 3])", "m.zeros(size=(2, 3))",
    "m.zeros(size=[2])", "m.zeros(())", "m.zeros(m.Size([2, 3]))", "m.zeros(np.int64(2))",
    "m.zeros(m.tensor(2))", "m.zeros((m.tensor(2), 3))", "m.zeros(2, True)",
    "m.zeros((2, 3), dtype=m.int32)", "m.zeros(2, dtype=float)", "m.ones(2, dtype=m.bool)",
    "m.ones(2, 3, dtype=m.bfloat16)", "m.ones(2, layout=m.strided)", "m.empty(2, 3).shape",
    "m.empty((2, 3), dtype=m.int8).dtype", "m.empty(size=(2,)).shape", "m.empty(0).shape",
    "m.empty(2, 3, 4, 5, memory_format=m.channels_last).stride()",
    "m.zeros(2, dtype=m.float64, requires_grad=True)", "m.ones(2, 2, out=m.empty(2, 2))",
    "m.zeros(2, out=m.empty(2, dtype=m.int64))", "m.full((2, 3), 1.5)", "m.full((2, 3), 7)",
    "m.full((2, 3), True)", "m.full([2], 7, dtype=m.float16)", "m.full((), 7)",
    "m.full((2,), m.tensor(3.5))", "m.full((2,), 1.5, dtype=m.int64)",
    "m.full((2,), float('nan'))", "m.full(size=(2,), fill_value=3)",
    "m.full((2,), np.float32(1.5))", "m.full((2,), 1.5, out=m.empty(2, dtype=m.int64))",
    "m.full((2,), 1, out=m.empty(2, dtype=m.float64))", "m.scalar_tensor(3)",
    "m.scalar_tensor(3.5)", "m.scalar_tensor(True)", "m.scalar_tensor(3, dtype=m.int64)",
    "m.scalar_tensor(m.tensor(2.5))", "m.eye(3)", "m.eye(2, 3)", "m.eye(3, 2, dtype=m.int64)",
    "m.eye(0)", "m.eye(3, dtype=m.bool)", "m.eye(n=2, m=3)", "m.eye(2, out=m.empty(2, 2))",
))
def test_factories(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.zeros()", "m.ones()", "m.empty()", "m.zeros(m.tensor(2.0))", "m.zeros(2.0)",
    "m.zeros(2, 3.0)", "m.zeros((2, 3), 4)", "m.zeros((2,), (3,))", "m.zeros([2.0])",
    "m.zeros(np.float64(2))", "m.zeros(None)", "m.zeros('a')", "m.zeros(m.tensor([2, 3]))",
    "m.zeros(True)", "m.zeros(size=3)", "m.zeros(2, size=(3,))", "m.zeros(-1)",
    "m.zeros(2, -3)", "m.zeros((2, -1))", "m.ones(-1)", "m.empty(-1)", "m.full((-1,), 2)",
    "m.zeros(2, dtype=m.float64, out=m.empty(2))", "m.full(2, 7)",
    "m.full((2,), m.tensor([3.5]))", "m.full((2,), 'a')", "m.full((2,), None)", "m.eye(2.5)",
    "m.eye(-1)", "m.eye(2, -1)", "m.ones(2, dtype='float32')", "m.ones(2, dtype=np.float32)",
    "m.zeros(2, dtype=m.int64, requires_grad=True)", "m.full((2,), 1, requires_grad=True)",
    "m.empty(2, 3, memory_format=m.channels_last)", "m.ones(2).new_zeros()",
    "m.empty_strided((2, 3), (1,))",
))
def test_factory_errors(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.arange(5)", "m.arange(5.0)", "m.arange(1, 5)", "m.arange(1, 5, 2)", "m.arange(0, 1, 0.1)",
    "m.arange(0, 1, 0.3)", "m.arange(1, 0, -0.1)", "m.arange(10, 0, -3)", "m.arange(0, -10, -3)",
    "m.arange(np.int32(5))", "m.arange(m.tensor(5))", "m.arange(m.tensor(5.0))",
    "m.arange(m.tensor(1), m.tensor(3))", "m.arange(0, 5, 0.5, dtype=m.int32)",
    "m.arange(0, 2.5, 0.5, dtype=m.float16)", "m.arange(0, 1, 0.1, dtype=m.float64)",
    "m.arange(start=1, end=4)", "m.arange(end=4)", "m.arange(1, 4, step=2)",
    "m.arange(5, dtype=m.float32)", "m.arange(-3, 3, 1.5)", "m.arange(1e-8, 1e-7, 1e-8)",
    "m.arange(True)", "m.arange(0, 1, 1 / 3)", "m.arange(0, 1.0000001, 0.1)",
    "m.arange(5, out=m.empty(5))", "m.arange(5, out=m.empty(5, dtype=m.int32))",
    "m.arange(0, 5.5, dtype=m.int64)", "m.arange(0.5, 5.5, dtype=m.int64)",
    "m.arange(0, 5, 0)", "m.arange(5, 0)", "m.arange(0, 5, -1)", "m.arange(0, float('inf'))",
    "m.arange(0, float('nan'))", "m.arange(5, dtype=m.bool)", "m.arange(0, 10 ** 19)",
    "m.arange(3, requires_grad=True)", "m.arange(3.0, requires_grad=True)",
))
def test_arange(expr):
    run(expr)


@given(st.integers(-50, 50), st.integers(-50, 50), st.sampled_from([1, 2, 3, -1, -2, -7]))
def test_arange_int_lengths(start, end, step):
    check_outcome(lambda m: m.arange(start, end, step))


@given(st.floats(-10, 10), st.floats(-10, 10), st.floats(0.01, 3), st.booleans())
def test_arange_float_lengths(start, end, step, negative):
    step = -step if negative else step
    check_outcome(lambda m: m.arange(start, end, step))
    check_outcome(lambda m: m.arange(start, end, step, dtype=m.float64))


@pytest.mark.parametrize("expr", cases(
    "m.range(1, 4)", "m.range(0, 1, 0.25)", "m.range(4, 1, -1)", "m.range(1, 4, dtype=m.int64)",
    "m.range(0, 1, 0)", "m.range(1, 0)",
))
def test_deprecated_range(expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.linspace(0, 1, 5)", "m.linspace(0, 1, 1)", "m.linspace(0, 1, 0)", "m.linspace(0, 1, -1)",
    "m.linspace(0, 10, 7, dtype=m.int64)", "m.linspace(-1, 1, 6, dtype=m.float64)",
    "m.linspace(0, 1, steps=4)", "m.linspace(3, -3, 5)", "m.linspace(0, 1, 3, dtype=m.float16)",
    "m.linspace(0, 1, 3, dtype=m.bfloat16)", "m.linspace(m.tensor(0.0), m.tensor(1.0), 3)",
    "m.linspace(0, 255, 4, dtype=m.uint8)", "m.linspace(0, 1, 5, out=m.empty(5, "
    "dtype=m.float64))", "m.linspace(0, 1, 2.5)", "m.linspace(0, 1, 3, dtype=m.int8)",
    "m.logspace(0, 2, 3)", "m.logspace(0, 2, 3, base=2)", "m.logspace(0, 2, 3, 2)",
    "m.logspace(-1, 1, 4, dtype=m.float64)", "m.logspace(0, 3, 4, dtype=m.int64)",
    "m.logspace(0, 1, 0)", "m.logspace(0, 1, 1)", "m.logspace(0, 3, 4, base=2, dtype=m.int32)",
    "m.logspace(0, 4, 3, dtype=m.float16)", "m.logspace(0.5, 2.5, 5, dtype=m.int64)",
    "m.logspace(-2, 2, 7, dtype=m.bfloat16)", "m.logspace(0, 1, -1)",
))
def test_linspace_logspace(expr):
    run(expr)


@given(st.floats(-5, 5), st.floats(-5, 5), st.integers(0, 40),
       st.sampled_from(["float32", "float64", "float16", "bfloat16", "int64"]))
def test_logspace_property(start, end, steps, dtype):
    check_outcome(lambda m: m.logspace(start, end, steps, dtype=getattr(m, dtype)))


# --- *_like, empty_strided, Tensor.new_* ---------------------------------------------------------

@pytest.mark.parametrize("expr", cases(
    "m.zeros_like(m.ones(2, 3))", "m.zeros_like(m.ones(2, 3, dtype=m.int32))",
    "m.zeros_like(m.ones(2, 3), dtype=m.int8)", "m.ones_like(m.ones(2, 3).t())",
    "m.ones_like(m.ones(2, 3).t()).stride()",
    "m.ones_like(m.ones(2, 3).t(), memory_format=m.contiguous_format).stride()",
    "m.empty_like(m.ones(2, 3).t()).stride()", "m.full_like(m.ones(2, 3), 7)",
    "m.full_like(m.ones(2, 3, dtype=m.int32), 7.5)", "m.full_like(m.ones(2), fill_value=2)",
    "m.zeros_like(m.ones(2, 3).expand(4, 2, 3)).stride()",
    "m.zeros_like(m.ones(4, 1, 3).expand(4, 2, 3)).stride()",
    "m.zeros_like(m.ones(2, 3, 4).permute(2, 0, 1)).stride()",
    "m.zeros_like(m.ones(2, 3), requires_grad=True)",
    "m.zeros_like(m.ones(2, dtype=m.int32), requires_grad=True)", "m.zeros_like([1, 2])",
    "m.rand_like(m.ones(2, dtype=m.float64)).dtype", "m.randn_like(m.ones(2, 3)).shape",
    "m.randint_like(m.ones(2, 3), 5).dtype", "m.randint_like(m.ones(2, 3), 3, 5).shape",
    "m.randint_like(m.ones(2, 3, dtype=m.int32), 3, 5).dtype",
    "m.empty_like(m.ones(2, 3), device='meta').shape",
    "m.empty_strided((2, 3), (3, 1)).stride()", "m.empty_strided((2, 3), (1, 2)).stride()",
    "m.empty_strided((2, 3), (1, 2), dtype=m.int32).dtype",
    "m.empty_strided((2, 3), (4, 1)).stride()",
))
def test_like_and_strided(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.ones(2, 3).new_zeros(2)", "m.ones(2, 3).new_zeros((2, 1))", "m.ones(2, 3).new_zeros([2, 1])",
    "m.ones(2, 3).new_zeros(2, 1)", "m.ones(2, 3).new_zeros(size=(2, 1))",
    "m.ones(2, 3, dtype=m.int8).new_ones(2)", "m.ones(2, 3, dtype=m.int8).new_ones(2, "
    "dtype=m.float64)", "m.ones(2, 3).new_full((2,), 3)", "m.ones(2, 3).new_full([2], 3.5)",
    "m.ones(2, 3, dtype=m.int32).new_full((2,), 3.5)", "m.ones(2).new_empty(3).shape",
    "m.ones(2).new_empty((3, 1)).shape", "m.ones(2, dtype=m.int32).new_tensor([1, 2])",
    "m.ones(2, dtype=m.int32).new_tensor([1.5, 2])", "m.ones(2).new_tensor([1, 2], "
    "dtype=m.int64)", "m.ones(2).new_tensor(m.tensor([1, 2]))",
    "m.ones(2).new_tensor(np.array([1, 2]))", "m.ones(2).new_ones(2, requires_grad=True)",
    "m.ones(2).new_zeros(())", "m.ones(2).new_empty_strided((2, 3), (3, 1)).stride()",
    "m.ones(2).new_zeros(-1)", "m.ones(2).new_full(2, 1)", "m.ones(2, dtype=m.int64).new(2, 3)."
    "dtype", "m.ones(2, dtype=m.int64).new([1.5])",
))
def test_new_methods(expr):
    run(expr)


# --- legacy constructors -------------------------------------------------------------------------

LEGACY_ARGS = ["()", "(2, 3)", "([1, 2],)", "((1, 2),)", "(np.array([1, 2]),)",
               "(m.tensor([1, 2]),)", "(2.5,)", "([[1, 2], [3]],)", "(3,)", "(2, 3.0)",
               "(m.Size([2]),)", "(-1,)"]


@pytest.mark.parametrize("ctor", ["Tensor", "FloatTensor", "LongTensor", "BoolTensor",
                                  "DoubleTensor", "ByteTensor"])
@pytest.mark.parametrize("args", LEGACY_ARGS)
def test_legacy_constructors(ctor, args):
    def fn(m):
        out = getattr(m, ctor)(*eval(args, {"m": m, "np": np}))
        # uninitialised memory: compare shape and dtype only
        return (tuple(out.shape), out.dtype) if args in ("(2, 3)", "(3,)", "(m.Size([2]),)") \
            else out
    check_outcome(fn)


def test_legacy_isinstance_and_device():
    assert isinstance(strata.ones(2), strata.FloatTensor)
    assert isinstance(strata.ones(2, dtype=strata.int64), strata.LongTensor)
    assert not isinstance(strata.ones(2, dtype=strata.int64), strata.FloatTensor)
    assert not isinstance(strata.ones(2, device="meta"), strata.FloatTensor)
    assert isinstance(strata.ones(2), strata.Tensor)
    assert strata.FloatTensor.dtype is strata.float32 and not strata.LongTensor.is_cuda
    assert strata.Tensor(2, device="cpu").shape == (2,)
    run("m.FloatTensor(2, device='meta')")
    run("m.Tensor([1, 2], dtype=m.int64)")


def test_tensor_alias_shares_storage():
    src = strata.tensor([1.0, 2.0])
    alias = strata.Tensor(src)
    alias[0] = 5.0
    assert src[0].item() == 5.0


# --- dtype of results is independent of values ---------------------------------------------------

@pytest.mark.parametrize("dtype", sorted(DTYPE_PAIRS))
def test_factories_every_dtype(dtype):
    s_dt, t_dt = DTYPE_PAIRS[dtype]
    for fn in (lambda m, d: m.zeros(2, 3, dtype=d), lambda m, d: m.ones(4, dtype=d),
               lambda m, d: m.full((3,), 1, dtype=d), lambda m, d: m.eye(3, dtype=d),
               lambda m, d: m.zeros_like(m.ones(2), dtype=d),
               lambda m, d: m.ones(2, 2).new_ones(3, dtype=d)):
        assert_same(fn(strata, s_dt), fn(torch, t_dt))
