"""Conversions and attributes against PyTorch: ``to()`` overloads, dtype shorthands, ``type()``,
``item``/``tolist``/``numpy``/``__array__``, Python number protocols, storage attributes."""

import operator

import numpy as np
import pytest
import strata
from helpers import DTYPE_PAIRS, check_outcome

VALUES = np.array([[1.5, -2.75, 0.0], [3.0, 100.25, -0.5]])


def cases(*exprs):
    return [pytest.param(e, id=e) for e in exprs]


def run(expr, **names):
    return check_outcome(lambda m: eval(expr, {"m": m, "np": np, "operator": operator,
                                               "x": m.tensor(VALUES), **names}))


# --- to() --------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr", cases(
    "x.to(m.float64)", "x.to('cpu')", "x.to('cpu', m.int32)", "x.to(m.device('cpu'), "
    "dtype=m.int32)", "x.to(dtype=m.int32)", "x.to(device='cpu', dtype=m.int32)",
    "x.to(m.ones(1, dtype=m.int8))", "x.to(m.ones(1, dtype=m.int8), copy=True)",
    "x.to(m.float64, True)", "x.to(m.float64, True, True)",
    "x.to(m.float64, non_blocking=True, copy=True)", "x.to('cpu', m.float64, True)",
    "x.to(float)", "x.to(int)", "x.to(bool)", "x.to(None)", "x.to()", "x.to('meta').shape",
    "x.to('meta', m.int8).dtype", "x.to(m.float32, memory_format=m.contiguous_format)",
    "x.to(dtype=m.float32, device='cpu', non_blocking=False, copy=False)",
    "x.t().to(memory_format=m.contiguous_format).stride()", "x.t().to(m.float64).stride()",
    "x.to(m.float64, m.int32)", "x.to(foo=1)", "x.to(m.float32, 'cpu')", "x.to('cpu', 'cpu')",
    "x.to(m.ones(1), m.float64)", "x.to(other=m.ones(1))", "x.to('float32')",
    "x.to(m.float64, non_blocking=1)",
))
def test_to_overloads(expr):
    run(expr)


def test_to_returns_self_when_nothing_changes():
    x = strata.ones(2, 3)
    for same in (x.to(strata.float32), x.to("cpu"), x.to(x), x.to("cpu", strata.float32),
                 x.to(dtype=strata.float32), x.cpu(), x.float(), x.type(strata.float32),
                 x.to(memory_format=strata.contiguous_format), x.type_as(x)):
        assert same is x
    copied = x.to(strata.float32, copy=True)
    assert copied is not x and copied.data_ptr() != x.data_ptr()
    assert x.to(strata.float64) is not x


@pytest.mark.parametrize("method", ["float", "double", "half", "bfloat16", "long", "int", "short",
                                    "char", "byte", "bool"])
@pytest.mark.parametrize("src", ["float32", "float64", "int64", "int8", "bool", "float16"])
def test_dtype_shorthands(method, src):
    values = np.array([[1.5, -2.75, 0.0], [3.0, 100.25, -0.5]])
    if method == "byte" or src in ("bool",):
        values = np.abs(values)
    s_dt, t_dt = DTYPE_PAIRS[src]
    check_outcome(lambda m, d=(s_dt, t_dt): getattr(
        m.tensor(values).to(d[0] if m is strata else d[1]), method)())


# --- type(), type_as() ---------------------------------------------------------------------------

@pytest.mark.parametrize("expr", cases(
    "m.tensor([1, 2]).type()", "m.tensor([1.0, 2]).type()", "m.ones(2, dtype=m.float16).type()",
    "m.tensor([True]).type()", "m.ones(2, dtype=m.uint8).type()",
    "m.ones(2, dtype=m.bfloat16).type()", "m.ones(2, device='meta').type()",
    "m.tensor([1, 2]).type(m.float64)", "m.tensor([1, 2]).type('torch.DoubleTensor')",
    "m.tensor([1, 2]).type(m.DoubleTensor)", "m.tensor([1, 2]).type('torch.FooTensor')",
    "m.tensor([1, 2]).type('float64')", "m.tensor([1, 2]).type(dtype=m.int32)",
    "m.tensor([1, 2]).type(m.float32, non_blocking=True)", "m.tensor([1, 2]).type_as(m.ones(1))",
    "m.tensor([1, 2]).type_as(m.ones(1, dtype=m.float64))", "m.tensor([1, 2]).type_as(3)",
))
def test_type(expr):
    run(expr)


# --- to Python and NumPy -------------------------------------------------------------------------

@pytest.mark.parametrize("expr", cases(
    "m.tensor([1, 2]).item()", "m.tensor([2.5]).item()", "m.tensor(2.5).item()",
    "m.tensor(True).item()", "m.tensor([[7]]).item()", "m.tensor([], dtype=m.int64).item()",
    "m.tensor(2.5, dtype=m.bfloat16).item()", "m.tensor(2.5, dtype=m.float16).item()",
    "type(m.tensor(2.5, dtype=m.float16).item())", "type(m.tensor(2.5, dtype=m.bfloat16).item())",
    "type(m.tensor(2, dtype=m.uint8).item())", "type(m.tensor(True).item())",
    "m.tensor(0.1).item()", "m.ones(2, 2).t()[0].item()" if False else "m.ones(1, 1).t().item()",
    "m.ones(2, device='meta').item()", "m.ones(1, device='meta').item()",
    "m.tensor(1.5, requires_grad=True).item()",
    "m.tensor([[1, 2], [3, 4]]).tolist()", "m.tensor(2.5).tolist()", "m.tensor([0.1, 0.2])."
    "tolist()", "m.tensor([0.1, 0.2], dtype=m.bfloat16).tolist()", "m.tensor([0.1, 0.2], "
    "dtype=m.float16).tolist()", "m.tensor([True, False]).tolist()",
    "m.tensor([], dtype=m.int64).tolist()", "m.zeros(2, 0).tolist()",
    "type(m.tensor([1], dtype=m.int8).tolist()[0])", "x.t().tolist()",
    "m.ones(2, device='meta').tolist()", "m.tensor([1.0], requires_grad=True).tolist()",
))
def test_item_and_tolist(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "x.numpy()", "x.numpy().dtype", "x.t().numpy().strides", "m.tensor([1.5], "
    "requires_grad=True).numpy()", "m.tensor([1.5], requires_grad=True).numpy(force=True)",
    "m.ones(2, device='meta').numpy()", "np.asarray(x)", "np.asarray(x, dtype=np.float64)",
    "np.asarray(m.tensor([1.5], requires_grad=True))", "np.array(m.tensor([1, 2]), copy=True)",
    "x.__array__(np.int32)", "np.float64(3) + m.tensor([1.5])", "np.sin(x)", "np.greater(x, 0)",
    "np.add(x, 1)",
))
def test_numpy_interop(expr):
    result = run(expr)
    if expr in ("x.numpy()", "np.asarray(x)"):
        assert isinstance(result, np.ndarray)


def test_numpy_shares_memory():
    x = strata.tensor(VALUES)
    arr = x.numpy()
    arr[0, 0] = 42.0
    assert x[0, 0].item() == 42.0
    x.mul_(2)
    assert arr[0, 0] == 84.0
    assert np.shares_memory(np.asarray(x), arr)
    assert not np.shares_memory(np.array(x, copy=True), arr)
    with pytest.raises(ValueError, match="avoid copy"):
        x.__array__(np.int32, copy=False)
    view = x.t()
    assert np.shares_memory(view.numpy(), arr) and view.numpy().strides == (8, 24)


def test_bfloat16_numpy_is_supported():
    # PyTorch cannot: NumPy has no bfloat16. strata returns an ml_dtypes.bfloat16 array.
    arr = strata.tensor([1.5, 2.0], dtype=strata.bfloat16).numpy()
    assert arr.dtype == strata.bfloat16.np and arr.astype(np.float32).tolist() == [1.5, 2.0]


@pytest.mark.parametrize("expr", cases(
    "bool(m.tensor([1]))", "bool(m.tensor([0.0]))", "bool(m.tensor([1, 2]))", "bool(m.tensor([]))",
    "bool(m.tensor(float('nan')))", "int(m.tensor(2.7))", "int(m.tensor(-2.7))",
    "int(m.tensor([3]))", "int(m.tensor([3, 4]))", "int(m.tensor(True))",
    "int(m.tensor(float('nan')))", "int(m.tensor(float('inf')))", "float(m.tensor(3))",
    "float(m.tensor([3, 4]))", "float(m.tensor([[3.5]]))", "float(m.tensor([]))",
    "complex(m.tensor(3.5))", "complex(m.tensor([1, 2]))", "operator.index(m.tensor(3))",
    "operator.index(m.tensor([3]))", "operator.index(m.tensor(3.0))",
    "operator.index(m.tensor(True))", "operator.index(m.tensor([3, 4]))",
    "[10, 20, 30][m.tensor(1)]", "[10, 20, 30][m.tensor([1])]",
    "list(range(10)[m.tensor(2):m.tensor(5)])", "hex(m.tensor(255))",
    "f'{m.tensor(3.14159):.2f}'", "f'{m.tensor(3):03d}'", "f'{m.tensor(3.5)}'",
    "f'{m.tensor([1., 2.])}'", "f'{m.tensor([1., 2.]):>30}'", "f'{m.tensor([1., 2.]):.2f}'",
    "f'{m.tensor(2.5, requires_grad=True):.1f}'", "format(m.tensor(True), '')",
    "'{}'.format(m.tensor(5))", "f'{m.ones((), device=\"meta\")}'",
))
def test_python_number_protocols(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "len(m.ones(3, 2))", "len(m.ones(()))", "len(m.ones(0, 2))",
    "[t.tolist() for t in m.tensor([[1, 2], [3, 4]])]", "list(m.tensor([1, 2]))",
    "list(m.tensor(3))", "list(m.zeros(0))",
))
def test_len_and_iter(expr):
    run(expr)


@pytest.mark.parametrize("expr", cases(
    "m.ones(2, 3).element_size()", "m.ones(2, 3, dtype=m.bfloat16).element_size()",
    "m.ones(2, 3, dtype=m.bool).element_size()", "m.ones(2, 3).itemsize", "m.ones(2, 3).nbytes",
    "m.ones(2, 3, dtype=m.int16).nbytes", "m.ones(2, 3).t().nbytes", "m.ones(2, 3)."
    "storage_offset()", "m.ones(2, 3)[1].storage_offset()", "m.ones(2, 3)[1:, 1:]."
    "storage_offset()", "m.ones(2, 3).is_contiguous()", "m.ones(2, 3).t().is_contiguous()",
    "m.ones(1, 3).t().is_contiguous()", "m.ones(2, 3)[:, ::2].is_contiguous()",
    "m.ones(2, 0).t().is_contiguous()", "m.ones(0, 3)[:, ::2].is_contiguous()",
    "m.ones(2, 3).untyped_storage().size()", "m.ones(2).dim()", "m.ones(2).ndimension()",
    "m.ones(2, 3).nelement()", "m.ones(2).is_floating_point()",
    "m.ones(2, dtype=m.int32).is_floating_point()", "m.ones(2).is_complex()",
    "m.ones(2).is_signed()", "m.ones(2, dtype=m.uint8).is_signed()", "m.ones(2).get_device()",
    "m.ones(2).is_cuda", "m.ones(2).is_meta", "m.ones(2, device='meta').is_meta",
    "m.ones(2).is_cpu", "m.ones(2).device", "m.ones(2, device='meta').device",
    "m.ones(2).is_sparse", "m.ones(2).is_quantized", "m.ones(2).is_mkldnn", "m.ones(2).is_nested",
    "m.ones(2).is_shared()", "m.ones(2).size()", "m.ones(2, 3).size(-1)", "m.ones(2, 3).size(2)",
    "m.ones(2, 3).stride(0)", "m.ones(2, 3).stride(-3)", "m.ones(2, 3).ndim",
    "m.ones(2, 3).T.shape", "m.ones(2, 3).mT.shape", "m.ones(2).mT", "m.ones(2, 3).H.shape",
    "m.ones(2).requires_grad", "m.ones(2).is_leaf", "m.ones(2).grad", "m.ones(2).grad_fn",
    "m.ones(2).dtype", "m.ones(2).is_pinned()", "m.ones(2, 3).dim_order()",
    "m.ones(2, 3).t().dim_order()", "m.ones(2).real", "m.ones(2).imag", "m.ones(2).conj()",
    "m.ones(2).is_conj()", "m.ones(2).is_neg()", "m.ones(2).resolve_conj()",
    "m.ones(2).resolve_neg()", "m.ones(2).__dlpack_device__()",
    "m.ones(2, device='meta').__dlpack_device__()",
))
def test_attributes(expr):
    run(expr)


def test_storage_identity_and_pointers():
    x = strata.arange(6.0).reshape(2, 3)
    row = x[1]
    assert row.untyped_storage() is x.untyped_storage()
    assert row.data_ptr() == x.data_ptr() + 3 * x.element_size()
    assert x.t().data_ptr() == x.data_ptr()
    assert x.clone().data_ptr() != x.data_ptr()
    assert hash(x) == hash(x) and hash(x) != hash(x.clone())
    assert {x: 1}[x] == 1


# --- devices -----------------------------------------------------------------------------------

@pytest.mark.parametrize("expr", cases(
    "m.device('cpu')", "m.device('cpu:0')", "m.device('cpu', 0)", "m.device('meta')",
    "m.device('cuda:1')", "m.device('cuda', 1)", "m.device('cpu:0', 1)", "m.device('cpu:-1')",
    "m.device('cpu', -1)", "m.device('cpu:01')", "m.device('cpu:x')", "m.device('float32')",
    "m.device('xyz')", "m.device('')", "m.device(' cpu')", "m.device('CPU')", "m.device(5)",
    "m.device(None)", "m.device(1.5)", "m.device(m.device('cpu'))",
    "m.device(m.device('cpu'), 0)", "m.device(type='cpu')", "m.device(type='cpu', index=0)",
    "str(m.device('cpu:0'))", "repr(m.device('cpu:0'))", "repr(m.device('meta'))",
    "m.device('cpu').type", "m.device('cpu').index", "m.device('cpu:0').index",
    "m.device('cpu') == m.device('cpu:0')", "m.device('cpu') == 5",
    "hash(m.device('cpu')) == hash(m.device('cpu'))", "m.device('cpu') != m.device('meta')",
    "m.ones(2, device=m.device('cpu', 0)).device", "m.ones(2, device='cpu:0').device",
))
def test_device_parsing(expr):
    run(expr)


def test_device_compares_with_its_string():
    # deliberate difference: PyTorch says device("cpu") != "cpu"
    assert strata.device("cpu") == "cpu" and strata.device("cpu") != "meta"
    assert strata.device("cpu") != "not a device"
    with strata.device("meta"):
        assert strata.ones(2).device == strata.device("meta")
    assert strata.ones(2).device == strata.device("cpu")


def test_to_dlpack_capsules_share_memory_both_ways():
    """``strata.utils.dlpack``: a capsule from strata read by PyTorch and one from PyTorch read
    by strata share their memory (writes show through), with no warning."""
    import warnings

    import torch
    t = strata.arange(4.0)
    seen_by_torch = torch.utils.dlpack.from_dlpack(strata.utils.dlpack.to_dlpack(t))
    seen_by_torch[0] = 7
    assert t.tolist() == [7.0, 1.0, 2.0, 3.0]
    source = torch.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seen_by_strata = strata.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(source))
    seen_by_strata[1] = 9
    assert source.tolist() == [0.0, 9.0, 2.0]
    # as PyTorch's, to_dlpack exports a tensor that requires grad (its data)
    assert torch.utils.dlpack.from_dlpack(strata.utils.dlpack.to_dlpack(
        strata.ones(2, requires_grad=True))).tolist() == [1.0, 1.0]
    assert strata.utils.dlpack.DLDeviceType.kDLCPU == torch.utils.dlpack.DLDeviceType.kDLCPU
