"""Copying shape ops beyond the sample database: ``stack`` (a primitive: one np.stack) and
``cat`` against PyTorch on random layouts (the output's memory format follows
``suggest_memory_format``), their errors, gradients, and that the result owns fresh memory."""

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check, check_error
from hypothesis import given
from hypothesis import strategies as st


@st.composite
def layouts(draw):
    """A 3- to 5-d array, the permutation it is stored in, and a dim (for cat and stack)."""
    ndim = draw(st.integers(3, 5))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    perm = tuple(draw(st.permutations(range(ndim))))
    count = draw(st.integers(1, 3))
    return shape, perm, count, draw(st.integers(-ndim - 1, ndim))


@given(layouts())
def test_cat_and_stack_layouts_match_torch(case):
    """The inputs are stored in ``perm`` order (permuted views of contiguous tensors)."""
    shape, perm, count, dim = case
    stored = [shape[d] for d in perm]
    inverse = tuple(int(i) for i in np.argsort(perm))

    def fn(m):   # built by each library (NumPy's strides of size-1 dims are arbitrary)
        x = m.arange(int(np.prod(shape)), dtype=m.float32).reshape(stored).permute(inverse)
        xs = [x] * count
        return m.stack(xs, dim), m.cat(xs, max(min(dim, len(shape) - 1), -len(shape)))
    check(fn, check_stride=True)


@pytest.mark.parametrize("case", [
    ((3, 1, 3, 2), (0, 2, 3, 1), 2, -1),      # size-1 C: still channels-last (C's stride isn't 0)
    ((3, 1, 2, 1), (0, 2, 1, 3), 2, -4),
    ((1, 1, 2, 1), (0, 2, 3, 1), 1, 3),
    ((2, 3, 4, 5), (0, 2, 3, 1), 3, 4),       # stack at the end: a cat of unsqueezed inputs
    ((2, 3, 4, 5, 2), (0, 2, 3, 4, 1), 2, 1),  # channels_last_3d
    ((2, 4, 3), (0, 2, 1), 3, 3),             # 3-d inputs unsqueezed into channels-last 4-d
])
def test_cat_and_stack_channels_last_cases(case):
    test_cat_and_stack_layouts_match_torch.hypothesis.inner_test(case)


def test_stack_errors_match_torch():
    a = np.zeros((2, 3), np.float32)
    check_error(lambda m, x: m.stack([x, x[:, :2]]), a, match="stack expects each tensor to be "
                r"equal size, but got \[2, 3\] at entry 0 and \[2, 2\] at entry 1")
    check_error(lambda m, x: m.stack([]), a, match="stack expects a non-empty TensorList")
    check_error(lambda m, x: m.stack([x, x], 3), a, match="Dimension out of range")
    check_error(lambda m, x: m.stack([x, x], -4), a, match="Dimension out of range")


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack_backward_is_unbind(dim):
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal(s) for s in ((2, 3), (2, 3), (3, 2, 3)))

    def fn(m, x, y, weight):
        x, y = x.requires_grad_(), y.requires_grad_()
        out = m.stack([x, y.float().double(), x], dim)
        (out * weight.movedim(0, dim)).sum().backward()
        return out.grad_fn.name(), x.grad, y.grad
    check(fn, a, b, w)


def test_stack_of_one_requires_grad_only():
    x = strata.ones(3, requires_grad=True)
    y = strata.zeros(3)
    strata.stack([y, x]).sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(3))


def test_stack_result_owns_fresh_memory():
    """Writing into the result leaves the inputs alone (it is a copy, not a view)."""
    xs = [strata.full((2, 2), float(i)) for i in range(3)]
    out = strata.stack(xs, 1)
    out.zero_()
    assert out._base is None
    assert [x.sum().item() for x in xs] == [0.0, 4.0, 8.0]
    assert torch.equal(torch.stack([torch.full((2, 2), float(i)) for i in range(3)], 1)[:, 2],
                       torch.from_numpy(strata.stack(xs, 1)[:, 2].numpy()))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3, 2), (2, 2), (3, 2, 4), (4,), (1, 5)])
def test_meshgrid_matches_torch(indexing, sizes):
    """"xy" swaps the first two inputs and the first two grids, as ATen does (strata also
    transposed the grids: a (3, 2) grid where PyTorch gives (2, 3))."""
    def grids(m):
        return m.meshgrid(*(m.arange(n) * 1.5 + i for i, n in enumerate(sizes)),
                          indexing=indexing)
    for got, want in zip(grids(strata), grids(torch)):
        assert_same(got, want)


CAT_ERRORS = {
    "empty list": lambda m: m.cat([]),
    "zero-dim first": lambda m: m.cat([m.tensor(1.0), m.ones(2)]),
    "zero-dim second": lambda m: m.cat([m.ones(2), m.tensor(1.0)]),
    "ndim": lambda m: m.cat([m.ones(2, 3), m.ones(2, 3, 1)]),
    "size": lambda m: m.cat([m.ones(2, 3), m.ones(2, 3), m.ones(4, 3)], 1),
    "dim range": lambda m: m.cat([m.ones(2, 3)], 2),
    "legacy empty skipped": lambda m: m.cat([m.ones(2, 3), m.ones(0), m.ones(1, 3)]),
}


@pytest.mark.parametrize("case", CAT_ERRORS)
def test_cat_checks_word_errors_as_torch(case):
    """``cat``'s meta reads each input's sizes once: its errors (and the legacy skip of 1-d
    empty inputs) as torch's, word for word."""
    outcomes = []
    for m in (strata, torch):
        try:
            outcomes.append(tuple(CAT_ERRORS[case](m).shape))
        except Exception as e:      # noqa: BLE001 (the error is what is compared)
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]
