"""The fast paths of a training step, against PyTorch: pooling by a loop over kernel offsets
(values, indices with ties, NaN and padding, over random geometries), ``.grad`` strides after
backward (the gradient layout contract), and DataLoader batches pinned when the sim device is
there."""

import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error
from hypothesis import given
from hypothesis import strategies as st

import strata


@st.composite
def pool_cases(draw, dilation=True):
    """An input and a valid pooling geometry: kernel, stride, padding (<= half the kernel),
    dilation, ceil_mode, with values from a small set so windows have ties."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if dilation else (1, 1)
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    size = tuple(draw(st.integers((k - 1) * d + 1, 7)) for k, d in zip(kernel, dil))
    lead = draw(st.sampled_from([(), (2,), (2, 3), (0, 2)]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = rng.integers(-3, 4, lead + size).astype(np.float64)
    return x, kernel, stride, padding, dil, draw(st.booleans())


@given(pool_cases(), st.sampled_from(["float32", "float64", "int64"]),
       st.sampled_from([None, "nan", "-inf"]))
def test_max_pool2d_matches_torch(case, dtype, special):
    x, kernel, stride, padding, dilation, ceil_mode = case
    if x.ndim == 2:
        x = x[None]
    if special and dtype != "int64" and x.size:
        flat = x.reshape(-1)
        flat[:: max(1, flat.size // 3)] = np.nan if special == "nan" else -np.inf
    check(lambda m, a: m.nn.functional.max_pool2d(a, kernel, stride, padding, dilation,
                                                 ceil_mode, return_indices=True),
          x.astype(dtype))


def test_max_pool2d_takes_the_last_nan_and_the_first_inside_element():
    """PyTorch's loop replaces the maximum by a greater element or a NaN; a window of -inf keeps
    its first element inside the input (not a padded position)."""
    nan = np.array([[[[1.0, np.nan, 3.0, np.nan], [5.0, 2.0, -1.0, 0.0]]]])
    check(lambda m, a: m.nn.functional.max_pool2d(a, (2, 4), return_indices=True), nan)
    check(lambda m, a: m.nn.functional.max_pool2d(a, 2, 2, 1, return_indices=True),
          np.full((1, 1, 3, 3), -np.inf))


def test_padding_over_half_the_kernel_is_refused_even_when_dilated():
    check_error(lambda m, a: m.nn.functional.max_pool2d(a, (3, 1), 1, (2, 0), (2, 1)),
                np.zeros((1, 5, 1)))


@given(pool_cases(dilation=False), st.sampled_from(["float32", "float64"]), st.booleans(),
       st.sampled_from([None, 3]))
def test_avg_pool2d_matches_torch(case, dtype, count_include_pad, divisor):
    x, kernel, stride, padding, _, ceil_mode = case
    if x.ndim == 2:
        x = x[None]
    check(lambda m, a: m.nn.functional.avg_pool2d(a, kernel, stride, padding, ceil_mode,
                                                 count_include_pad, divisor), x.astype(dtype))


def test_max_pool2d_half_and_noncontiguous_input():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 8)).astype(np.float32)
    check(lambda m, a: m.nn.functional.max_pool2d(a.half(), 3, 2, 1, return_indices=True), x)
    check(lambda m, a: m.nn.functional.max_pool2d(a.transpose(-1, -2), 2, return_indices=True),
          x)


@given(pool_cases(), st.sampled_from(["float32", "float64"]))
def test_max_pool2d_backward_matches_torch(case, dtype):
    """The gradient goes to the index's element; ties and overlapping windows add up."""
    x, kernel, stride, padding, dilation, ceil_mode = case
    if x.ndim == 2:
        x = x[None]

    def grad_of(m, a):
        a = a.requires_grad_()
        out = m.nn.functional.max_pool2d(a, kernel, stride, padding, dilation, ceil_mode)
        g = m.arange(out.numel(), dtype=out.dtype).reshape(out.shape)
        return m.autograd.grad(out, a, g)[0]
    check(grad_of, x.astype(dtype))


def test_max_pool2d_double_backward_by_finite_differences():
    x = strata.tensor(np.random.default_rng(1).standard_normal((2, 2, 5, 6)),
                      requires_grad=True)
    pool = lambda t: strata.nn.functional.max_pool2d(t, 3, 2, 1, ceil_mode=True)  # noqa: E731
    assert strata.autograd.gradcheck(pool, (x,))
    assert strata.autograd.gradgradcheck(pool, (x,))


def _backward_op(m, g, x, indices, kernel=(2, 2)):
    return m.ops.aten.max_pool2d_with_indices_backward(g, x, kernel, kernel, [0, 0], [1, 1],
                                                       False, indices)


def test_max_pool2d_backward_op_matches_torch_and_checks_its_arguments():
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype(np.float32)
    idx = np.array([0, 3, 9, 14] * 2).reshape(1, 2, 2, 2)
    g = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    g[0, 1, 0, 1] = np.nan   # reaches its own element only
    check(lambda m, g_, x_, i_: _backward_op(m, g_, x_, i_), g, x, idx)
    check_error(lambda m, g_, x_, i_: _backward_op(m, g_.double(), x_, i_), g, x, idx)
    check_error(lambda m, g_, x_, i_: _backward_op(m, g_, x_, i_), g[..., :1], x, idx)
    check_error(lambda m, g_, x_, i_: _backward_op(m, g_, x_, i_), g, x, idx[:, :1])


# --- .grad layout ---------------------------------------------------------------------------------

def _grads_after(m, build):
    params, loss = build(m)
    loss.backward()
    return [p.grad for p in params]


def _same_values(m, module):
    """The module's parameters, set to the same values in both libraries."""
    params = list(module.parameters())
    with m.no_grad():
        for p in params:
            p.copy_(m.linspace(-1, 1, p.numel()).reshape(p.shape))
    return params


def _linear(m):
    lin = m.nn.Linear(5, 3)
    return _same_values(m, lin), lin(m.ones(4, 5)).pow(2).sum()


def _conv(m):
    conv = m.nn.Conv2d(2, 4, 3)
    return _same_values(m, conv), conv(m.ones(2, 2, 6, 6)).pow(2).sum()


def _transposed_use(m):
    w = m.ones(3, 4, requires_grad=True)
    v = m.ones(4, 3).t().contiguous().t().detach().requires_grad_()   # column-major leaf
    return [w, v], (m.ones(2, 4) @ w.t() * 2).sum() + (m.ones(2, 4) @ v).pow(2).sum()


def _expanded_use(m):
    b = m.ones(3, requires_grad=True)
    s = m.ones((), requires_grad=True)
    return [b, s], (m.ones(4, 3) * b + s).sum()


@pytest.mark.parametrize("build", [_linear, _conv, _transposed_use, _expanded_use])
def test_grad_strides_follow_the_parameter_like_torch(build):
    """``.grad`` is laid out as PyTorch lays it out (the param's strides, or contiguous), and
    is not a view of some other gradient."""
    for g_s, g_t in zip(_grads_after(strata, build), _grads_after(torch, build)):
        assert_same(g_s, g_t, check_stride=True)
        assert g_s._base is None


def test_accumulated_grad_keeps_its_layout():
    """A second backward adds into ``.grad`` in place: same tensor, same strides."""
    lin = strata.nn.Linear(5, 3)
    lin(strata.ones(4, 5)).sum().backward()
    first = lin.weight.grad
    lin(strata.ones(4, 5)).sum().backward()
    assert lin.weight.grad is first and first.stride() == (5, 1)
    np.testing.assert_allclose(first.numpy(), np.full((3, 5), 8.0))


# --- DataLoader(pin_memory=True) ----------------------------------------------------------------

def _loader(**kwargs):
    ds = strata.utils.data.TensorDataset(strata.arange(12.0).reshape(6, 2), strata.arange(6))
    return strata.utils.data.DataLoader(ds, batch_size=4, **kwargs)


@pytest.mark.skipif(not strata.sim.is_available(), reason="needs the sim device")
@pytest.mark.parametrize("workers", [0, 1])
def test_dataloader_pins_batches_when_sim_is_available(workers):
    strata.sim.init()   # pinning is for a device in use: a CPU-only program warns instead
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "no accelerator" warning: sim is one
        batches = list(_loader(pin_memory=True, num_workers=workers))
    assert [tuple(x.shape) for x, _ in batches] == [(4, 2), (2, 2)]
    assert all(x.is_pinned() and y.is_pinned() for x, y in batches)
    assert isinstance(batches[0], list)   # default_collate's container, as torch's loader
    np.testing.assert_array_equal(batches[1][0].numpy(), [[8.0, 9.0], [10.0, 11.0]])
    assert not any(x.is_pinned() for x, _ in _loader())


def test_pin_memory_recurses_into_containers_like_torch():
    from collections import namedtuple

    from strata.utils.data._collate import pin_memory
    pair = namedtuple("Pair", "a b")
    seen = []

    class Custom:
        def pin_memory(self):
            seen.append(self)
            return "pinned"

    data = {"t": (1, "s", Custom()), "n": pair([Custom()], b"x")}
    out = pin_memory(data)
    assert out == {"t": (1, "s", "pinned"), "n": pair(["pinned"], b"x")}
    assert type(out["n"]) is pair and len(seen) == 2


def test_linear_weight_grad_needs_no_saved_weight():
    """Only the weight's geometry is kept when the input needs no gradient: an in-place change
    of the (non-leaf) weight after forward is fine, as in PyTorch; with the input needing a
    gradient the weight is saved and the change is caught."""
    for m in (strata, torch):
        w = m.randn(4, 3, requires_grad=True)
        w3 = w * 1
        y = m.nn.functional.linear(m.randn(2, 3), w3)
        w3.mul_(2)
        y.sum().backward()
        assert w.grad.stride() == (3, 1)
        x = m.randn(2, 3, requires_grad=True)
        w3 = w * 1
        y = m.nn.functional.linear(x, w3)
        w3.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_mat2_gradient_layout_follows_pytorch():
    """Only an exactly column-major mat2 (strides (1, rows)) gets the transposed gradient."""
    for m in (strata, torch):
        w = m.arange(64.).reshape(8, 8).requires_grad_()
        m2 = w.t()[:4]                      # strides (1, 8) with 4 rows: not column-major
        g, = m.autograd.grad(m.mm(m.ones(3, 4), m2).sum(), [m2])
        assert g.stride() == (8, 1)
