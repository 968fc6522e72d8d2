"""Writes into views inside compiled graphs: functionalization records each as
``as_strided_scatter`` (the view's functional inverse), which inductor lowers to a pointwise
select. A view's gradient (slice, select, as_strided backward) and in-place writes into views of
values and inputs give eager's results on inductor, aot_eager and the OpenCL device; the
backward of weight slices is one fused kernel, with no index tensor, scatter or Check."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from helpers import recording_backend

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
BACKENDS = ["inductor", "aot_eager"]
E = 8


def _slices(x, w):
    """A packed projection's three weight slices (the tiny GPT's attention)."""
    q, k, v = x @ w[:E].t(), x @ w[E:2 * E].t(), x @ w[2 * E:].t()
    return ((q * k).sigmoid() * v).sum()


def _select_and_strided(x, w):
    rows = w.select(0, 2) * x[0] + w[:, 1:5:2].sum()
    return (rows.sum() + w.as_strided((3, 2), (E, 2), 5).tanh().sum()
            + w.reshape(-1)[3:40:3].sum())


def _writes_into_value_views(x, w):
    y = w * 2
    y[1:4, 2:6] = x[:3, :4] * 3     # copy_ into a 2-D slice
    y.select(1, 0).mul_(-1)          # a write through a select
    y[:, ::2].add_(1)                # a view with steps
    y.t()[2:4].sub_(0.5)             # a transposed view
    return (y * y).sum(), y


def _writes_into_input_views(x, w):
    x[1:].mul_(2)                    # an input's view: written back to the input
    x[:, :3].add_(w[:x.shape[0], :3])
    return (x * w[:x.shape[0]]).sum()


FUNCTIONS = [_slices, _select_and_strided, _writes_into_value_views]


def _run(fn, backend, xa, wa):
    x = strata.tensor(xa)
    w = strata.tensor(wa, requires_grad=True)
    f = fn if backend is None else strata.compile(fn, backend=backend)
    out = f(x, w)
    loss = out[0] if isinstance(out, tuple) else out
    loss.backward()
    values = [o.detach().numpy() for o in (out if isinstance(out, tuple) else (out,))]
    return values + [w.grad.numpy()]


def _arrays(seed, rows=3 * E):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((5, E)).astype(np.float32),
            rng.standard_normal((rows, E)).astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_view_gradients_and_writes_match_eager(fn, backend):
    xa, wa = _arrays(0)
    for got, want in zip(_run(fn, backend, xa, wa), _run(fn, None, xa, wa)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_into_input_views_reach_the_input(backend):
    """Note [Offsets of functionalized writes]: the input may start anywhere in its storage
    (here a slice at offset 8), which the traced graph does not see."""
    xa, wa = _arrays(1)
    results = []
    for compiled in (True, False):
        storage = strata.tensor(np.concatenate([np.zeros((1, E), np.float32), xa]))
        x = storage[1:]
        w = strata.tensor(wa, requires_grad=True)
        fn = strata.compile(_writes_into_input_views, backend=backend) if compiled \
            else _writes_into_input_views
        loss = fn(x, w)
        loss.backward()
        results.append([loss.detach().numpy(), storage.detach().numpy(), w.grad.numpy()])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_non_dense_input_view_write_runs_eagerly_not_wrongly():
    """A write into a view of a strided input is refused by functionalization (its offset at run
    time is unknown); the function then runs eagerly, with eager's values."""
    storage = strata.zeros(4, 6)

    def f(x):
        x[1:].add_(1)
        return x * 2
    with pytest.warns(UserWarning, match="not dense"):
        out = strata.compile(f, backend="aot_eager")(storage[:, ::2])
    np.testing.assert_array_equal(out.numpy(), [[0] * 3] + [[2] * 3] * 3)
    np.testing.assert_array_equal(storage.numpy()[:, ::2], [[0] * 3] + [[1] * 3] * 3)
    np.testing.assert_array_equal(storage.numpy()[:, 1::2], np.zeros((4, 3)))


def test_weight_slice_backward_is_one_fused_kernel():
    """The three slices' gradients (zeros, as_strided_scatter, add) are one pointwise kernel
    over the whole weight: no arange, scatter, Check or IndexAdd."""
    xa, wa = _arrays(2)
    runs = []
    got = _run(_slices, recording_backend(runs), xa, wa)
    for g, w in zip(got, _run(_slices, None, xa, wa)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    backward = runs[-1].ir_post_fusion
    for absent in ("IndexAdd", "Check(", "Fallback", "index_expr(0 + (i0)*1"):
        assert absent not in backward
    assert backward.count(f"Pointwise(float32, ranges=[{3 * E}, {E}])") == 1


@pytest.mark.skipif(not strata.opencl.is_available(), reason="needs an OpenCL driver (PoCL)")
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_opencl_graphs_match_eager(fn):
    xa, wa = _arrays(3)

    def run(compiled):
        x = strata.tensor(xa).to("opencl")
        w = strata.tensor(wa).to("opencl").requires_grad_(True)
        out = (strata.compile(fn) if compiled else fn)(x, w)
        loss = out[0] if isinstance(out, tuple) else out
        loss.backward()
        return [o.detach().cpu().numpy() for o in (out if isinstance(out, tuple) else (out,))] \
            + [w.grad.cpu().numpy()]
    for got, want in zip(run(True), run(False)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not strata.opencl.is_available(), reason="needs an OpenCL driver (PoCL)")
def test_opencl_eager_kernel_matches_cpu():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    src = -np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    for layout, size, stride, offset in [(lambda t: t, (2, 3), (1, 6), 7),
                                         (lambda t: t.t(), (2, 3), (6, 1), 2),
                                         (lambda t: t[1:], (2, 3), (6, 1), None)]:
        got = strata.as_strided_scatter(layout(strata.tensor(x).to("opencl")),
                                        strata.tensor(src).to("opencl"), size, stride, offset)
        want = strata.as_strided_scatter(layout(strata.tensor(x)), strata.tensor(src), size,
                                         stride, offset)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


LAYOUTS = {"fresh": lambda t: t * 2, "transposed": lambda t: (t * 2).transpose(0, -1),
           "sliced": lambda t: (t * 2)[1:], "contiguous": lambda t: (t * 2).flip(0)}


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       layout=st.sampled_from(sorted(LAYOUTS)), explicit_offset=st.booleans(), data=st.data())
def test_random_as_strided_scatter_matches_eager(shape, layout, explicit_offset, data):
    """Any view (box, nested, interleaved, overlapping) into self's storage: the generated
    formula, eager's kernel, or (where inductor cannot know eager's storage) an eager run of
    the function; never other values."""
    rng = np.random.default_rng(len(shape))
    x = strata.tensor(rng.standard_normal(shape).astype(np.float32))
    make = LAYOUTS[layout]
    base = make(x)
    available = base.untyped_storage().nbytes // 4 - base.storage_offset()
    ndim = data.draw(st.integers(0, 3))
    size = tuple(data.draw(st.integers(1, 3)) for _ in range(ndim))
    stride = tuple(data.draw(st.integers(1, 6)) for _ in range(ndim))
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if extent > available:
        return
    offset = (base.storage_offset() + data.draw(st.integers(0, available - extent))
              if explicit_offset else None)
    src = strata.tensor(rng.standard_normal(size).astype(np.float32))

    def f(x, src):
        return strata.as_strided_scatter(make(x), src + 1, size, stride, offset) * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # "... it runs eagerly"
        got = strata.compile(f, backend="inductor")(x, src)
    np.testing.assert_array_equal(got.numpy(), f(x, src).numpy())


@pytest.mark.parametrize("shape, size, stride, offset", [
    ((6, 8), (2, 3), (8, 2), 17),      # a box with a step: range and step tests on the index
    ((48,), (3, 4), (8, 1), 5),        # nested strides in a 1-D self: division and remainder
    ((6, 8), (2, 2), (9, 3), 1),       # neither a box nor dense: a remainder test too
])
def test_views_lower_to_one_formula(shape, size, stride, offset):
    x = strata.randn(*shape)
    src = strata.randn(*size)
    runs = []

    def f(x, src):
        return strata.as_strided_scatter(x * 2, src, size, stride, offset).exp()
    got = strata.compile(f, backend=recording_backend(runs))(x, src)
    np.testing.assert_allclose(got.numpy(), f(x, src).numpy(), rtol=1e-6)
    ir = runs[0].ir_post_fusion
    assert "Fallback" not in ir and ir.count("Pointwise(") == 1


def test_a_view_inductor_cannot_place_runs_eagerly():
    """An overlapping view (the last write wins) placed by storage offset in a slice of a
    value: inductor's buffers do not keep the value's storage, so the function runs eagerly."""
    x = strata.arange(12.).reshape(4, 3)

    def f(x, src):
        return strata.as_strided_scatter((x * 2)[1:], src, (2, 3), (1, 1), 0) * 3
    src = strata.ones(2, 3)
    with pytest.warns(UserWarning, match="as_strided_scatter whose view"):
        got = strata.compile(f, backend="inductor")(x, src)
    np.testing.assert_array_equal(got.numpy(), f(x, src).numpy())
    assert got[0, 0].item() == 3 and got[0, 1].item() == 24


class _Cache(strata.nn.Module):
    """A key/value cache: a buffer written in place through a view at each step."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keys", strata.zeros(2, 6, 4))

    def forward(self, x, at):
        self.keys[:, at:at + x.shape[1]] = x
        return self.keys[:, :at + x.shape[1]].sum(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_buffer_written_through_a_view_matches_eager(backend):
    eager, compiled = _Cache(), _Cache()
    run = strata.compile(compiled, backend=backend)
    for at in (0, 2, 3):
        x = strata.randn(2, 2, 4)
        np.testing.assert_allclose(run(x, at).numpy(), eager(x, at).numpy(), rtol=1e-6)
        np.testing.assert_array_equal(compiled.keys.numpy(), eager.keys.numpy())
