"""gcd, lcm, nextafter, frombuffer and the deprecated qr/triangular_solve
(frontend/composites.py, tensor_new.py) against PyTorch: values, dtypes, gradients, errors
and the untouched state after one."""

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import strata

INTS = st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=12)


def _both(fn):
    """fn(torch) and fn(strata), or the exceptions they raised."""
    out = []
    for m in (torch, strata):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(m))
        except Exception as exc:  # noqa: BLE001  (compared below)
            out.append(exc)
    return out


def _same(fn):
    want, got = _both(fn)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want)
        return
    assert not isinstance(got, Exception), got
    want, got = (want,) if not isinstance(want, tuple) else want, \
        (got,) if not isinstance(got, tuple) else got
    for w, g in zip(want, got, strict=True):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())


@given(INTS, INTS)
def test_gcd_and_lcm_match_torch(a, b):
    n = min(len(a), len(b))
    for name in ("gcd", "lcm"):
        _same(lambda m, name=name: getattr(m, name)(m.tensor(a[:n]), m.tensor(b[:n])))


@pytest.mark.parametrize("case", [
    lambda m: m.gcd(m.tensor([[4], [9]]), m.tensor([6, 3])),                 # broadcast
    lambda m: m.gcd(m.tensor([4], dtype=m.uint8), m.tensor([6], dtype=m.int32)),
    lambda m: m.lcm(m.tensor([0, 0, 5]), m.tensor([0, 3, 0])),
    lambda m: m.tensor([12, 18], dtype=m.int16).gcd_(m.tensor([8, 12], dtype=m.int16)),
    lambda m: m.tensor([4, 6], dtype=m.int8).lcm_(m.tensor([6, 4])),
    lambda m: m.gcd(m.tensor([4.0]), m.tensor([6.0])),
    lambda m: m.gcd(m.tensor([True]), m.tensor([True])),
    lambda m: m.gcd(m.tensor([4]), 6),
])
def test_gcd_lcm_cases_and_errors(case):
    _same(case)


def test_a_refused_in_place_gcd_leaves_self():
    x = strata.tensor([4.0, 6.0])
    with pytest.raises(NotImplementedError):
        x.gcd_(strata.tensor([2.0, 3.0]))
    assert x.tolist() == [4.0, 6.0]


SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 3.4e38, 2.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nextafter_matches_torch_on_special_values(dtype):
    xs = [x for x in SPECIAL for _ in SPECIAL]
    ys = [y for _ in SPECIAL for y in SPECIAL]
    want, got = _both(lambda m: m.nextafter(m.tensor(xs, dtype=getattr(m, dtype)),
                                            m.tensor(ys, dtype=getattr(m, dtype))))
    w, g = want.float().numpy(), got.float().numpy()
    np.testing.assert_array_equal(g, w)
    assert np.array_equal(np.signbit(g), np.signbit(w))


@given(st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=8),
       st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=8))
def test_nextafter_matches_numpy_float32(xs, ys):
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n], np.float32), np.array(ys[:n], np.float32)
    got = strata.nextafter(strata.tensor(x), strata.tensor(y)).numpy()
    np.testing.assert_array_equal(got, np.nextafter(x, y))


def test_nextafter_dtypes_gradient_and_errors():
    _same(lambda m: m.nextafter(m.tensor([1.0]), m.tensor([2.0], dtype=m.float64)))
    _same(lambda m: m.nextafter(m.tensor([1]), m.tensor([2])))
    _same(lambda m: m.tensor([1.0, 2.0]).nextafter_(m.tensor([3.0, 0.0])))
    grads = []
    for m in (torch, strata):     # PyTorch's derivative: the gradient where x moved, 0 to other
        x = m.tensor([1.0, 2.0, 5.0, -0.0, 1e-45], requires_grad=True)
        o = m.tensor([2.0, 0.0, 5.0, 0.0, -3.0], requires_grad=True)
        m.nextafter(x, o).sum().backward()
        grads.append((x.grad.tolist(), o.grad.tolist()))
    assert grads[0] == grads[1]


def test_nextafter_runs_on_opencl():
    if not strata.opencl.is_available():
        pytest.skip("no OpenCL device")
    x, y = np.array([1.0, 0.0, -2.0], np.float32), np.array([2.0, -1.0, -3.0], np.float32)
    got = strata.nextafter(strata.tensor(x).to("opencl"), strata.tensor(y).to("opencl"))
    np.testing.assert_array_equal(got.cpu().numpy(), np.nextafter(x, y))
    a, b = strata.tensor([12, 18, -7]).to("opencl"), strata.tensor([8, 27, 21]).to("opencl")
    assert strata.gcd(a, b).cpu().tolist() == [4, 9, 7]


@pytest.mark.parametrize("kwargs", [{}, {"count": 1, "offset": 4}, {"count": 3},
                                    {"offset": 9}, {"offset": 2}, {"offset": -1}])
def test_frombuffer_matches_torch(kwargs):
    _same(lambda m: m.frombuffer(bytearray(b"\x00\x00\x80?\x00\x00\x00@"), dtype=m.float32,
                                 **kwargs))


@pytest.mark.parametrize("buffer", [b"", [1, 2]])
def test_frombuffer_errors(buffer):
    _same(lambda m: m.frombuffer(buffer, dtype=m.float32))


def test_frombuffer_shares_the_buffer_and_takes_requires_grad():
    data = bytearray(8)
    t = strata.frombuffer(data, dtype=strata.float32, requires_grad=True)
    assert t.requires_grad and t.shape == (2,)
    t.detach()[1] = 2.0
    assert bytes(data[4:]) == b"\x00\x00\x00@"
    with pytest.raises(RuntimeError, match="floating point and complex"):
        strata.frombuffer(bytearray(8), dtype=strata.int32, requires_grad=True)


def _triangular(m, batch=(3,), lower=False):
    rng = np.random.default_rng(0)
    a = np.triu(rng.standard_normal((*batch, 3, 3))) + 3 * np.eye(3)
    return m.tensor(a.transpose(*range(len(batch)), -1, -2).copy() if lower else a)


@pytest.mark.parametrize("kwargs", [{}, {"transpose": True}, {"upper": False},
                                    {"unitriangular": True},
                                    {"upper": False, "transpose": True}])
def test_triangular_solve_matches_torch(kwargs):
    rng = np.random.default_rng(1)
    b = rng.standard_normal((2, 1, 3, 2))                  # batches broadcast with A's (3,)
    want, got = _both(lambda m: m.triangular_solve(
        m.tensor(b), _triangular(m, lower=not kwargs.get("upper", True)), **kwargs))
    assert type(got).__name__ == "triangular_solve"
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


def test_triangular_solve_gradient_and_errors():
    rng = np.random.default_rng(2)
    b = rng.standard_normal((3, 2))
    grads = []
    for m in (torch, strata):
        a = _triangular(m, batch=()).requires_grad_()
        bt = m.tensor(b, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.triangular_solve(bt, a, transpose=True).solution.square().sum().backward()
        grads.append((a.grad.numpy(), bt.grad.numpy()))
    for w, g in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    _same(lambda m: m.triangular_solve(m.ones(2, 1, dtype=m.float64), m.ones(2, 3)))
    _same(lambda m: m.triangular_solve(m.ones(2, 1), m.ones(2, 3)))


def test_qr_is_linalg_qr_with_some():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3))
    for some in (True, False):
        want, got = _both(lambda m, some=some: m.qr(m.tensor(a), some=some))
        assert type(got).__name__ == "qr"
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)
    want, got = _both(lambda m: m.tensor(a).qr())
    np.testing.assert_allclose(got.R.numpy(), want.R.numpy(), rtol=1e-12, atol=1e-12)


def test_the_deprecated_functions_warn_once(monkeypatch):
    from strata.frontend import composites
    monkeypatch.setattr(composites, "_warned", set())
    a = strata.eye(2)
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        strata.qr(a)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        strata.triangular_solve(a, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strata.qr(a)
        strata.triangular_solve(a, a)


def test_cond_and_while_loop_run_eagerly_as_pytorchs():
    x = [0.0, 1.0, 2.0, 3.0]
    for pred in (lambda m, t: t.sum() > 3, lambda m, t: t.sum() > 30, lambda m, t: True):
        got, want = (m.cond(pred(m, m.tensor(x)), lambda a: a.sin(), lambda a: a.cos(),
                            (m.tensor(x),)) for m in (strata, torch))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    got, want = (m._higher_order_ops.while_loop(lambda i, a: i < 3,
                                                lambda i, a: (i + 1, a * 2),
                                                (m.tensor(0), m.tensor(x)))
                 for m in (strata, torch))
    assert int(got[0]) == int(want[0]) == 3
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    _same(lambda m: m.cond(m.tensor(x) > 0, lambda a: a, lambda a: a, (m.tensor(x),)))


def test_cond_refuses_operands_that_are_not_a_tuple():
    _same(lambda m: m.cond(True, lambda a: a, lambda a: a, m.ones(2)))
    _same(lambda m: m.cond(True, lambda a: a, lambda a: a, 5))
