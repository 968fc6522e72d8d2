"""Python indexing (``x[i]``, ``x[i] = v``) and the indexing ops: against PyTorch, errors, views,
version counters, the meta device, and hypothesis over random index expressions.

The op-by-op value checks are in ``op_samples/indexing.py`` and ``op_samples/scatter.py``."""

import warnings

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check, check_error, check_meta, to_strata
from hypothesis import given
from hypothesis import strategies as st

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
M34 = (np.arange(12).reshape(3, 4) % 3) == 0


# --- getitem -------------------------------------------------------------------------------------

BASIC = {
    "int": lambda m, x: x[1],
    "negative_int": lambda m, x: x[-1],
    "int_tuple": lambda m, x: x[1, 2],
    "int_all": lambda m, x: x[1, 2, 3],
    "slice": lambda m, x: x[0:1],
    "slice_step": lambda m, x: x[:, ::2, 1::3],
    "slice_clamped": lambda m, x: x[-100:100, 5:],
    "slice_empty": lambda m, x: x[:, 2:1],
    "none": lambda m, x: x[None],
    "none_inside": lambda m, x: x[:, None, 1, None],
    "ellipsis": lambda m, x: x[...],
    "ellipsis_int": lambda m, x: x[..., 2],
    "ellipsis_middle": lambda m, x: x[1, ..., 2],
    "two_ellipses": lambda m, x: x[..., ...],
    "empty_tuple": lambda m, x: x[()],
    "full_slice": lambda m, x: x[:],
    "numpy_int": lambda m, x: x[np.int64(1), np.int32(2)],
    "tensor_0d_int": lambda m, x: x[m.tensor(1)],
    "tensor_0d_int32": lambda m, x: x[0, m.tensor(2, dtype=m.int32)],
    "slice_tensor_bounds": lambda m, x: x[:, m.tensor(1):m.tensor(3)],
    "ndarray_0d": lambda m, x: x[np.array(1)],
}

ADVANCED = {
    "list": lambda m, x: x[[1, 0, 1]],
    "list_in_tuple": lambda m, x: x[:, [2, 0]],
    "slice_list_slice": lambda m, x: x[:, [2, 0], 1:],
    "long_2d_rows": lambda m, x: x[m.tensor([[1, 0], [0, 0]])],
    "nested_list": lambda m, x: x[[[0, 1], [2, 1]]],
    "long_tensor": lambda m, x: x[m.tensor([1, 0])],
    "long_2d": lambda m, x: x[:, m.tensor([[0, 1], [2, 2]])],
    "int32_tensor": lambda m, x: x[m.tensor([1], dtype=m.int32)],
    "two_adjacent": lambda m, x: x[:, [0, 2], [1, 3]],
    "separated": lambda m, x: x[[0, 1], :, [3, 0]],
    "separated_by_none": lambda m, x: x[[0, 1], None, [2, 1]],
    "int_between": lambda m, x: x[[0, 1], 1, [2, 1]],
    "int_then_list": lambda m, x: x[1, [0, 2]],
    "broadcast": lambda m, x: x[m.tensor([[0], [1]]), :, m.tensor([0, 1, 2])],
    "ellipsis_list": lambda m, x: x[..., [0, 3]],
    "negative": lambda m, x: x[m.tensor([-1, -2])],
    "empty_list": lambda m, x: x[[]],
    "numpy_array": lambda m, x: x[np.array([1, 0])],
    "numpy_float_array": lambda m, x: x[np.array([1.7])],
    "float_list": lambda m, x: x[[0.0, 1.0]],
    "range": lambda m, x: x[range(2)],
    "true": lambda m, x: x[True],
    "false": lambda m, x: x[False],
    "true_with_list": lambda m, x: x[[0, 1], True],
    "mask_0d": lambda m, x: x[m.tensor(True)],
    "mask_0d_false": lambda m, x: x[m.tensor(False), 0],
    "bool_list": lambda m, x: x[[True, False]],
    "mask_2d": lambda m, x: x[0][m.tensor(M34)],
    "mask_dim1": lambda m, x: x[:, m.tensor([True, False, True])],
    "mask_numpy": lambda m, x: x[:, np.array([False, True, True])],
    "mask_then_int": lambda m, x: x[m.tensor([[True, False, True], [False, False, True]]), 0],
    "mask_and_list": lambda m, x: x[m.tensor([True, False]), :, [1]],
    "list_of_tensors": lambda m, x: x[[m.tensor([0, 1]), m.tensor([2, 1])]],
}


@pytest.mark.parametrize("name", list(BASIC))
def test_basic_getitem_is_a_view(name):
    s, t = check(BASIC[name], X, check_stride=True)
    base = to_strata(X)
    out = BASIC[name](strata, base)
    assert out.untyped_storage() is base.untyped_storage()
    assert out._base is base and out._version == base._version


@pytest.mark.parametrize("name", list(ADVANCED))
def test_advanced_getitem_copies(name):
    check(ADVANCED[name], X)
    check(ADVANCED[name], X, noncontiguous=True)
    base = to_strata(X)
    assert ADVANCED[name](strata, base).untyped_storage() is not base.untyped_storage()


def test_getitem_other_dtypes():
    for arr in (X.astype(np.int64), X > 5, X.astype(np.float16), X.astype(np.float64)):
        check(lambda m, x: x[1, [2, 0], 1:], arr)
        check(lambda m, x: x[x > 3] if x.dtype != m.bool else x[x], arr)


def test_zero_dim_tensor():
    z = np.array(5.0, np.float32)
    for fn in (lambda m, x: x[...], lambda m, x: x[None], lambda m, x: x[True],
               lambda m, x: x[()], lambda m, x: x[False], lambda m, x: x[None, ..., None]):
        check(fn, z)


def test_non_tuple_sequence_warns_like_torch():
    x = to_strata(X)
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        x[[0, slice(None)]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[[0, 1]]  # a plain list of ints is one index: no warning


# --- setitem -------------------------------------------------------------------------------------

def _setter(index_fn, value_fn):
    def fn(m, x):
        x[index_fn(m)] = value_fn(m)
        return x
    return fn


SETITEM = {
    "int_scalar": (lambda m: 1, lambda m: 7.5),
    "int_row": (lambda m: (0, 1), lambda m: m.tensor([1.0, 2, 3, 4])),
    "slice_broadcast": (lambda m: slice(None), lambda m: m.tensor([1.0, 2, 3, 4])),
    "slice_step": (lambda m: (slice(None), slice(None, None, 2)), lambda m: -1),
    "leading_ones": (lambda m: 0, lambda m: m.ones(1, 1, 4)),
    "ellipsis": (lambda m: Ellipsis, lambda m: 3),
    "none": (lambda m: None, lambda m: m.tensor(2.0)),
    "true": (lambda m: True, lambda m: 1),
    "false": (lambda m: False, lambda m: 1),
    "0d_tensor_other_dtype": (lambda m: (1, 2), lambda m: m.tensor(9, dtype=m.int64)),
    "0d_tensor_broadcast": (lambda m: 1, lambda m: m.tensor(9, dtype=m.int64)),
    "list": (lambda m: [1, 0], lambda m: 0.5),
    "list_values": (lambda m: (slice(None), [0, 2]), lambda m: m.arange(16.0).reshape(2, 2, 4)),
    "separated": (lambda m: ([0, 1], slice(None), [3, 0]), lambda m: m.tensor([[10.0], [20]])),
    "slice_int": (lambda m: (slice(None), 1), lambda m: m.tensor([[5.0, 6, 7, 8]])),
    "mask": (lambda m: m.tensor(X > 10), lambda m: -1),
    "mask_2d": (lambda m: m.tensor(M34[:2, :3]), lambda m: m.tensor([9.0, 8, 7, 6])),
    "mask_values": (lambda m: m.tensor(X > 20), lambda m: m.tensor([1.0, 2, 3])),
    "mask_dim1": (lambda m: (slice(None), m.tensor([True, False, True])), lambda m: 0),
    "mask_0d": (lambda m: m.tensor(True), lambda m: 4),
    "bool_numpy": (lambda m: np.array([False, True]), lambda m: 4.0),
    "tensor_0d_index": (lambda m: m.tensor(1), lambda m: 2.0),
    "duplicates_last_wins": (lambda m: [0, 0], lambda m: m.stack([m.zeros(3, 4),
                                                                    m.ones(3, 4)])),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem(name):
    fn = _setter(*SETITEM[name])
    check(fn, X)
    check(fn, X, noncontiguous=True)


def test_setitem_other_dtypes():
    check(_setter(lambda m: (0, [1, 2]), lambda m: 2.9), X.astype(np.int64))
    check(_setter(lambda m: 0, lambda m: 3), X > 4)
    check(_setter(lambda m: [1], lambda m: True), X > 4)
    check(_setter(lambda m: (1, slice(1, None)), lambda m: 0.1), X.astype(np.float16))
    check(_setter(lambda m: (1,), lambda m: -1), X.astype(np.uint8))


def test_setitem_writes_through_views_and_bumps_version():
    x = strata.zeros(3, 4)
    row = x[1]
    v0 = x._version
    row[2] = 5.0
    assert x[1, 2].item() == 5.0 and x._version == v0 + 1
    x[[0, 2]] = 1.0
    assert x._version == v0 + 2 and row._version == x._version
    x[x > 2] = 0.0
    assert x._version == v0 + 3
    assert x.sum().item() == 8.0


def test_inplace_ops_bump_version():
    x = strata.zeros(3, 4)
    i = strata.tensor([0, 2])
    ops = [lambda: x.index_put_((i,), strata.tensor(1.0)),
           lambda: x.masked_fill_(x > 0, 2.0),
           lambda: x.index_add_(0, i, strata.ones(2, 4)),
           lambda: x.index_copy_(0, i, strata.ones(2, 4)),
           lambda: x.index_fill_(1, i, 3.0),
           lambda: x.scatter_(1, strata.tensor([[0], [1], [2]]), 4.0),
           lambda: x.scatter_add_(1, strata.tensor([[0], [1], [2]]), strata.ones(3, 1)),
           lambda: x.masked_scatter_(x > 1, strata.arange(12.0)),
           lambda: x.put_(i, strata.tensor([5.0, 6.0]))]
    for k, op in enumerate(ops, 1):
        before = x._version
        assert op() is x
        assert x._version > before, k


# --- errors ---------------------------------------------------------------------------------------

GET_ERRORS = [
    (lambda m, x: x[5], "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda m, x: x[:, 7], "index 7 is out of bounds for dimension 1 with size 3"),
    (lambda m, x: x[None, None, 0, 4], "index 4 is out of bounds for dimension 3 with size 3"),
    (lambda m, x: x[-3], "index -3 is out of bounds for dimension 0 with size 2"),
    (lambda m, x: x[::-1], "step must be greater than zero"),
    (lambda m, x: x[::0], "slice step cannot be zero"),
    (lambda m, x: x[0, 0, 0, 0], "too many indices for tensor of dimension 3"),
    (lambda m, x: x[1.5], r"valid indices \(got float\)"),
    (lambda m, x: x[object()], r"valid indices \(got object\)"),
    (lambda m, x: x[{}], r"valid indices \(got dict\)"),
    (lambda m, x: x[np.bool_(True)], r"valid indices \(got numpy.bool"),
    (lambda m, x: x[1.0:2], "slice indices must be integers"),
    (lambda m, x: x[[0, 5]], "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda m, x: x[:, m.tensor([-4])], "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda m, x: x[m.tensor([0.0])], "tensors used as indices must be long, int, byte or bool"),
    (lambda m, x: x[m.tensor([1], dtype=m.int16)], "must be long, int, byte or bool"),
    (lambda m, x: x[m.tensor([True, False, True])],
     r"The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor "
     r"\[2, 3, 4\] at index 0"),
    (lambda m, x: x[0, m.ones(3, 3, dtype=m.bool)],
     r"mask \[3, 3\] at index 1 does not match .* \[3, 4\] at index 1"),
    (lambda m, x: x[[0, 1], [0, 1, 2]],
     r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], "
     r"\[3\]"),
    (lambda m, x: x[0, 0, 0][0], "invalid index of a 0-dim tensor"),
    (lambda m, x: x[0, 0, 0][1], "index 1 is out of bounds for dimension 0 with size 0"),
    (lambda m, x: x[0, 0, 0][:], r"slice\(\) cannot be applied to a 0-dim tensor"),
    (lambda m, x: x[0, 0, 0][[0]], "too many indices for tensor of dimension 0"),
]


@pytest.mark.parametrize("fn,match", GET_ERRORS)
def test_getitem_errors(fn, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_error(fn, X, match=match)


def _set_error(index_fn, value_fn):
    def fn(m, x):
        x[index_fn(m)] = value_fn(m)
    return fn


SET_ERRORS = [
    (lambda m: 5, lambda m: 1.0, "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda m: slice(None), lambda m: m.ones(3), r"The expanded size of the tensor \(4\) must "
     r"match the existing size \(3\) at non-singleton dimension 2"),
    (lambda m: 0, lambda m: m.ones(2, 1, 4), r"the number of sizes provided \(2\) must be greater "
     r"or equal to the number of dimensions in the tensor \(3\)"),
    (lambda m: [0], lambda m: m.ones(4, dtype=m.float64), "Index put requires the source and "
     "destination dtypes match, got Float for the destination and Double for the source."),
    (lambda m: [0, 1], lambda m: m.ones(3, 3), r"shape mismatch: value tensor of shape \[3, 3\] "
     r"cannot be broadcast to indexing result of shape \[2, 3, 4\]"),
    (lambda m: m.tensor(X > 10), lambda m: m.ones(5), r"value tensor of shape \[5\] cannot be "
     r"broadcast to indexing result of shape \[13\]"),
    (lambda m: 0, lambda m: "a", "can't assign a str to a torch.FloatTensor"),
    (lambda m: 0, lambda m: [1.0, 2.0], "can't assign a list to a torch.FloatTensor"),
    (lambda m: 0, lambda m: np.ones(4), "can't assign a numpy.ndarray"),
    (lambda m: slice(None, None, -1), lambda m: 1.0, "step must be greater than zero"),
    (lambda m: [0, 7], lambda m: 1.0, "index 7 is out of bounds for dimension 0 with size 2"),
]


@pytest.mark.parametrize("index_fn,value_fn,match", SET_ERRORS)
def test_setitem_errors_leave_self_unchanged(index_fn, value_fn, match):
    check_error(_set_error(index_fn, value_fn), X, match=match)


def test_setitem_value_overflow():
    x = X.astype(np.int64)
    check_error(_set_error(lambda m: 0, lambda m: float("inf")), x,
                match="value cannot be converted to type int64_t without overflow")
    check_error(_set_error(lambda m: [0], lambda m: float("nan")), x,
                match="value cannot be converted to type int64_t without overflow")
    check_error(_set_error(lambda m: 0, lambda m: 300), X.astype(np.int8),
                match="value cannot be converted to type int8_t without overflow")
    # a negative int wraps into an unsigned type, as in PyTorch
    check(_setter(lambda m: 0, lambda m: -1), X.astype(np.uint8))


A = np.arange(12, dtype=np.float32).reshape(3, 4)
I2 = np.array([[0, 2], [1, 0]], np.int64)

OP_ERRORS = [
    (lambda m, x: x.gather(1, m.tensor([[0.0]])), "gather\\(\\): Expected dtype int32/int64"),
    (lambda m, x: x.gather(1, m.tensor([[0, 5]])),
     "index 5 is out of bounds for dimension 1 with size 4"),
    (lambda m, x: x.gather(1, m.tensor([[0, -1]])), "index -1 is out of bounds"),
    (lambda m, x: x.gather(1, m.tensor([0])), "Index tensor must have the same number of "
     "dimensions as input tensor"),
    (lambda m, x: x.gather(1, m.zeros(4, 2, dtype=m.int64)),
     r"Size does not match at dimension 0 expected index \[4, 2\] to be no larger than self "
     r"\[3, 4\] apart from dimension 1"),
    (lambda m, x: x.gather(2, m.zeros(1, 1, dtype=m.int64)), "Dimension out of range"),
    (lambda m, x: x.scatter(1, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64)),
     r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    (lambda m, x: x.scatter(1, m.tensor([[0.0]]), 1.0),
     r"scatter\(\): Expected dtype int32/int64 for index"),
    (lambda m, x: x.scatter(1, m.zeros(4, 1, dtype=m.int64), m.ones(5, 5)),
     r"Expected index \[4, 1\] to be no larger than self \[3, 4\] apart from dimension 1 and to "
     r"be no larger size than src \[5, 5\]"),
    (lambda m, x: x.scatter(1, m.zeros(4, 1, dtype=m.int64), 1.0),
     r"Expected index \[4, 1\] to be no larger than self \[3, 4\] apart from dimension 1$"),
    (lambda m, x: x.scatter(1, m.zeros(2, 2, dtype=m.int64), m.ones(5)), "Dimension out of range"),
    (lambda m, x: x.scatter(1, m.tensor([[7]]), 1.0), "index 7 is out of bounds for dimension 1"),
    (lambda m, x: x.scatter(1, m.tensor([[0]]), m.ones(1, 1), reduce="sum"),
     "reduce argument must be either add or multiply."),
    (lambda m, x: x.long().scatter(1, m.tensor([[0]]), float("inf")),
     "value cannot be converted to type int64_t without overflow"),
    (lambda m, x: x.scatter_reduce(1, m.tensor([[0]]), m.ones(1, 1), "add"),
     "reduce argument must be either sum, prod, mean, amax or amin, got add"),
    (lambda m, x: x.bool().scatter_reduce(1, m.tensor([[0]]), m.ones(1, 1, dtype=m.bool),
                                          "mean"), "not implemented for 'Bool'"),
    (lambda m, x: x.scatter_add_(1, m.tensor([[9]]), m.ones(1, 1)),
     "index 9 is out of bounds for dimension 1 with size 4"),
    (lambda m, x: x.index_select(1, m.tensor([[0]])), "Index is supposed to be a vector"),
    (lambda m, x: x.index_select(1, m.tensor([0.0])), "Expected dtype int32 or int64 for index"),
    (lambda m, x: x.index_select(1, m.tensor([5])),
     "INDICES element is out of DATA bounds, id=5 axis_dim=4"),
    (lambda m, x: x[0].index_select(0, m.tensor([-1])), "index out of range in self"),
    (lambda m, x: x[0, 0].index_select(0, m.tensor([0, 0])),
     "Index to scalar can have only 1 value, got 2 value"),
    (lambda m, x: x.index_add_(1, m.tensor([0, 0]), m.ones(3, 3)),
     r"Number of indices \(2\) should be equal to source.size\(dim\): \(3\), for dim: 1"),
    (lambda m, x: x.index_add_(1, m.tensor([0]), m.ones(2, 1)),
     r"source tensor shape must match self tensor shape, excluding the specified dimension. "
     r"Got self.shape = \[3, 4\] source.shape = \[2, 1\]"),
    (lambda m, x: x.index_add_(1, m.tensor([0]), m.ones(3, 1, dtype=m.float64)),
     r"self \(Float\) and source \(Double\) must have the same scalar type"),
    (lambda m, x: x.index_add_(1, m.tensor([[0]]), m.ones(3, 1)),
     r"Index is supposed to be a vector, but got dim: 2 with type: Long and size: \[1, 1\]"),
    (lambda m, x: x.index_add_(1, m.tensor([7]), m.ones(3, 1)),
     "index 7 is out of bounds for dimension 1 with size 4"),
    # ATen's assert_no_overlap: a source aliasing self, wholly or in part, is refused
    (lambda m, x: x.index_add_(0, m.tensor([0, 2, 1]), x), "refer to a single memory location"),
    (lambda m, x: x.index_add_(0, m.tensor([0, 2, 1]), x.view(3, 4)),
     "refer to a single memory location"),
    (lambda m, x: x[1:].index_add_(0, m.tensor([0]), x[2:]), "refer to a single memory location"),
    (lambda m, x: x[:1].expand(3, 4).index_add_(0, m.tensor([0]), m.ones(1, 4)),
     "more than one element of the written-to tensor refers to a single memory location"),
    (lambda m, x: x.index_copy_(1, m.tensor([0, 3]), m.ones(3, 3)),
     r"Number of indices \(2\) should be equal to source.size\(dim\) \(3\)"),
    (lambda m, x: x.index_copy_(1, m.tensor([0], dtype=m.int32), m.ones(3, 1)),
     "Expected a long tensor for index, but got Int"),
    (lambda m, x: x.index_copy_(0, m.tensor([0]), m.ones(1, 5)),
     "Destination slice shape: 4 at dimension 0 and source slice shape: 5 at dimension 0."),
    (lambda m, x: x.index_copy_(1, m.tensor([-1]), m.ones(3, 1)),
     r"index_copy_\(\): index -1 is out of bounds for dimension 1 with size 4"),
    (lambda m, x: x.index_fill_(1, m.tensor([0], dtype=m.int32), 1.0),
     r"index_fill_\(\): Expected dtype int64 for index."),
    (lambda m, x: x.index_fill_(1, m.tensor([4]), 1.0),
     "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda m, x: x.index_fill_(1, m.tensor([0]), m.tensor([1.0])),
     "only supports a 0-dimensional value tensor, but got tensor with 1 dimension"),
    (lambda m, x: x.index_fill_(1, m.tensor([[0]]), 1.0), "Index has to be a vector/scalar"),
    (lambda m, x: x.masked_fill(x.long(), 1.0),
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    (lambda m, x: x.masked_fill_(x.byte(), 1.0), "but got mask with dtype unsigned char"),
    (lambda m, x: x[0].masked_fill_(x > 1, 1.0),
     r"output with shape \[4\] doesn't match the broadcast shape \[3, 4\]"),
    (lambda m, x: x.masked_fill_(m.tensor([True, False]), 1.0),
     r"The size of tensor a \(4\) must match the size of tensor b \(2\) at non-singleton "
     r"dimension 1"),
    (lambda m, x: x.masked_fill(m.tensor([True, False]), 1.0),
     r"The size of tensor a \(2\) must match the size of tensor b \(4\)"),
    (lambda m, x: x.masked_fill(x > 1, m.tensor([1.0])), "only supports a 0-dimensional value"),
    (lambda m, x: x.long().masked_fill(x > 1, float("nan")),
     "value cannot be converted to type int64_t without overflow"),
    (lambda m, x: x.masked_fill(x > 1, 1e40), "cannot be converted to type float without"),
    (lambda m, x: x.long().masked_fill(x > 1, m.tensor(float("inf"))),
     "value cannot be converted to type int64_t without overflow"),
    (lambda m, x: x.masked_select(x.long()), "masked_select: expected BoolTensor for mask"),
    (lambda m, x: x.masked_scatter_(x > 5, m.ones(3)),
     "Number of elements of source < number of ones in mask"),
    (lambda m, x: x.masked_scatter_(x > 5, m.ones(12, dtype=m.float64)),
     "masked_scatter: expected self and source to have same dtypes but gotFloat and Double"),
    (lambda m, x: x.masked_scatter_(x.long(), m.ones(12)),
     "masked_scatter_ only supports boolean masks, but got mask with dtype Long"),
    (lambda m, x: x.take(m.tensor([12])),
     r"out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda m, x: x.take(m.tensor([-13])), "tried to access index -13"),
    (lambda m, x: x.take(m.tensor([0], dtype=m.int32)),
     "take\\(\\): Expected a long tensor for index, but got Int"),
    (lambda m, x: x[:0].take(m.tensor([0])), "take\\(\\): tried to take from an empty tensor"),
    (lambda m, x: x.put_(m.tensor([0, 12]), m.ones(2)), "tried to access index 12"),
    (lambda m, x: x.put_(m.tensor([0]), m.ones(2)),
     r"Expected source and index to have the same number of elements, but got source.numel\(\) "
     r"= 2, index.numel\(\) = 1"),
    (lambda m, x: x.put_(m.tensor([0]), m.ones(1, dtype=m.int64)),
     "self.dtype = Float and source.dtype = Long"),
    (lambda m, x: m.take_along_dim(x, m.tensor([0, 1]), 1),
     "input and indices should have the same number of dimensions"),
    (lambda m, x: m.take_along_dim(x, m.tensor([[0]], dtype=m.int32), 1),
     "dtype of indices should be Long but got Int"),
    (lambda m, x: m.take_along_dim(x, m.zeros(2, 1, dtype=m.int64), 1),
     "The size of tensor a"),
    (lambda m, x: m.searchsorted(x[0], x, side="foo"),
     "side can only be 'left' or 'right' but got foo"),
    (lambda m, x: m.searchsorted(x[0], x, side="left", right=True),
     "side and right can't be set to opposites, got side of left while right was True"),
    (lambda m, x: m.searchsorted(x, x[:2]), r"boundaries tensor \[3, 4\] and input value tensor "
     r"\[2, 4\]"),
    (lambda m, x: m.searchsorted(x[0, 0], x), "boundaries tensor should have positive dimension"),
    (lambda m, x: m.searchsorted(x, x[0, 0]), "input value can be a scalar only when boundaries"),
    (lambda m, x: m.searchsorted(x[0], x, sorter=m.tensor([0, 1])),
     r"boundary and sorter must have the same size, but got boundary tensor \[4\]and got sorter "
     r"tensor \[2\]"),
    (lambda m, x: m.searchsorted(x[0], x, sorter=m.tensor([0, 1, 2, 3], dtype=m.int32)),
     "sorter must be a tensor of long dtype but got dtype Int"),
    (lambda m, x: m.searchsorted(x[0], x, sorter=m.tensor([0, 1, 2, 4])),
     "sorter index out of range"),
    (lambda m, x: m.searchsorted(x[0] > 1, x > 1), "not implemented for 'Bool'"),
    (lambda m, x: m.bucketize(x, x), r"boundaries tensor must be 1 dimension, but got dim\(2\)"),
    (lambda m, x: x.index_put_((m.tensor([0]),), m.ones(4, dtype=m.float64)),
     "Index put requires the source and destination dtypes match"),
    (lambda m, x: x.index_put_((m.tensor([0]),) * 3, m.ones(())),
     r"too many indices for tensor of dimension 2 \(got 3\)"),
    (lambda m, x: x.index_put_((m.tensor([0, 1]), m.tensor([0, 1, 2])), m.tensor(1.0)),
     "shape mismatch: indexing tensors could not be broadcast together"),
]


@pytest.mark.parametrize("fn,match", OP_ERRORS)
def test_op_errors(fn, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_error(fn, A, match=match)


def test_scatter_with_reduce_warns_like_torch():
    x, i, s = strata.zeros(2, 2), strata.tensor([[0, 0]]), strata.ones(1, 2)
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is "
                                         "deprecated"):
        out = x.scatter(1, i, s, reduce="add")
    assert out.tolist() == [[2.0, 0.0], [0.0, 0.0]]


# --- the meta device ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn,name", [
    (lambda m, x: x.nonzero(), "aten::nonzero"),
    (lambda m, x: x.masked_select(x > 0), "aten::masked_select"),
    (lambda m, x: x[x > 0], "aten::index.Tensor"),
    (lambda m, x: m.argwhere(x), "aten::nonzero"),
])
def test_meta_data_dependent_shapes_raise(fn, name):
    x = to_strata(A).to("meta")
    with pytest.raises(NotImplementedError, match=f"{name} has a data-dependent output shape; "
                                                  f"the meta device cannot compute it"):
        fn(strata, x)


def test_meta_indexing_and_checks():
    check_meta(lambda m, x: x[1:, [0, 2], None], X)
    check_meta(lambda m, x: x[[0, 1], :, [1, 2]], X)
    x = to_strata(X).to("meta")
    with pytest.raises(IndexError, match="shape of the mask"):
        x[strata.ones(3, device="meta", dtype=strata.bool)]
    x[x > 0] = 1.0  # a one-element value fills through the mask: fine on meta
    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        x[[0]] = strata.ones(3, 4, dtype=strata.float64, device="meta")


# --- properties ---------------------------------------------------------------------------------

@st.composite
def index_expressions(draw):
    """A random tuple of ints, slices, None, ..., int lists and bool masks for a random shape."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    entries, dim = [], 0
    used_ellipsis = used_mask = False
    while dim < len(shape) and draw(st.booleans()):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "list", "mask"]))
        n = shape[dim]
        if kind == "int":
            entries.append(draw(st.integers(-n, n - 1)))
            dim += 1
        elif kind == "slice":
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            entries.append(slice(start, stop, draw(st.none() | st.integers(1, 3))))
            dim += 1
        elif kind == "none":
            entries.append(None)
        elif kind == "ellipsis" and not used_ellipsis:
            entries.append(Ellipsis)
            used_ellipsis = True
            dim = len(shape)
        elif kind == "list":
            entries.append(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)))
            dim += 1
        elif kind == "mask" and not used_mask:
            entries.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
            used_mask = True
            dim += 1
    return shape, tuple(entries)


def _broadcastable(index):
    """Advanced entries of different lengths would not broadcast: cut lists to one element
    (a mask selects a data-dependent count, so any other list becomes one element too)."""
    lists = [e for e in index if isinstance(e, list)]
    masked = any(isinstance(e, np.ndarray) for e in index)
    if masked or len({len(e) for e in lists}) > 1:
        index = tuple(e[:1] if isinstance(e, list) else e for e in index)
    return index


@given(index_expressions(), st.sampled_from(["float32", "int64", "bool"]))
def test_random_index_expressions_match_torch(case, dtype):
    shape, index = case
    index = _broadcastable(index)
    arr = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    check(lambda m, x: x[index], arr)

    def write(m, x):
        x[index] = 7
        return x
    check(write, arr)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2), st.data())
def test_gather_scatter_round_trip(shape, dim_seed, data):
    """``scatter(gather(x, i), i)`` writes back what was read; ``scatter_add`` counts hits."""
    dim = dim_seed % len(shape)
    n = shape[dim]
    index = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=int(np.prod(shape)),
                                        max_size=int(np.prod(shape)))), np.int64).reshape(shape)
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    check(lambda m, a, i: a.gather(dim, i), x, index)
    check(lambda m, a, i: m.zeros_like(a).scatter_add(dim, i, m.ones_like(a)), x, index)
    check(lambda m, a, i: a.scatter_reduce(dim, i, a, "amax", include_self=False), x, index)
    s = to_strata(x)
    i = strata.tensor(index)
    back = strata.zeros_like(s).scatter(dim, i, s.gather(dim, i))
    assert_same(back.gather(dim, i), torch.tensor(x).gather(dim, torch.tensor(index)))


@pytest.mark.parametrize("where", [(None, [0]), ([0], None), (None,)])
def test_index_put_takes_no_none_from_python_as_torch(where):
    """The Python call refuses None in ``Tensor?[]`` (PyTorch's argument parser), with
    PyTorch's words, before anything is written; aten's op (what x[:, i] = v calls) takes it."""
    messages = []
    for lib in (strata, torch):
        x = lib.zeros(3, 4)
        idx = tuple(None if i is None else lib.tensor(i) for i in where)
        with pytest.raises(TypeError) as method:
            x.index_put_(idx, lib.tensor(1.0))
        with pytest.raises(TypeError) as function:
            lib.index_put(x, idx, lib.tensor(1.0))
        assert float(x.abs().sum()) == 0.0
        messages.append((str(method.value), str(function.value)))
    assert messages[0] == messages[1]
    x = strata.zeros(3, 4)
    strata.ops.aten.index_put_(x, [None, strata.tensor([1])], strata.tensor(2.0))
    assert float(x.sum()) == 6.0
