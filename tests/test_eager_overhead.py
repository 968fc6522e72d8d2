"""The fourth pass's eager shortcuts (docs/performance.md, "Fourth pass") keep PyTorch's results:
import freezes its objects (Note [Frozen import objects]) unless STRATA_GC_FREEZE=0; the engine
calls a hook-free node's ``apply`` directly (Note [Plain node call]) while nodes with hooks in
the same graph still run them, in PyTorch's order; a node's saved values read by name."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

_FREEZE_COUNT = "import gc, strata; print(gc.get_freeze_count())"


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out


def test_import_freezes_its_objects_unless_turned_off():
    assert int(_run(_FREEZE_COUNT, STRATA_GC_FREEZE="1").stdout) > 10_000
    assert int(_run(_FREEZE_COUNT, STRATA_GC_FREEZE="0").stdout) == 0
    bad = _run(_FREEZE_COUNT, STRATA_GC_FREEZE="yes")   # warns, keeps the default (on)
    assert "STRATA_GC_FREEZE should be 0 or 1" in bad.stderr
    assert int(bad.stdout) > 10_000


def test_import_freezes_no_garbage():
    """Frozen objects are never collected: everything frozen must be alive."""
    code = "import gc, strata; gc.unfreeze(); print(gc.collect())"
    assert int(_run(code).stdout) == 0


def _hooked_graph(m, x0, w0):
    """Plain nodes and hooked ones in one backward: a tensor hook, retain_grad, a node pre-hook
    and post-hook, a leaf hook; returns the hook log and every gradient."""
    log = []
    x = m.tensor(x0, requires_grad=True)
    w = m.tensor(w0, requires_grad=True)
    a = (x * w).tanh()                       # plain nodes below and above the hooked ones
    b = a * 3
    b.register_hook(lambda g: log.append("b") or g * 2)
    c = b.exp()
    c.retain_grad()
    c.grad_fn.register_prehook(lambda gs: log.append("pre") or None)
    c.grad_fn.register_hook(lambda gi, go: log.append("post") or None)
    x.register_hook(lambda g: log.append("x") or g + 1)
    (c.sin() * w).sum().backward()
    return log, [c.grad, x.grad, w.grad]


@settings(deadline=None, max_examples=15)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_plain_and_hooked_nodes_in_one_backward_match_torch(n, seed):
    rng = np.random.default_rng(seed)
    x0, w0 = rng.standard_normal(n), rng.standard_normal(n)
    s_log, s_grads = _hooked_graph(strata, x0, w0)
    t_log, t_grads = _hooked_graph(torch, x0, w0)
    assert s_log == t_log
    for s, t in zip(s_grads, t_grads):
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-12)


def test_anomaly_mode_still_checks_nodes_run_by_the_engine():
    for m in (strata, torch):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "Anomaly Detection has been enabled", as torch
            with m.autograd.detect_anomaly(check_nan=True):
                y = x.sqrt() * 0   # sqrt's gradient at 0 is inf; times 0 gives nan
                with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan "
                                                       "values in its 0th"):
                    y.sum().backward()


def test_saved_values_read_by_name_match_torch():
    for m in (strata, torch):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x.exp()
        np.testing.assert_allclose(y.grad_fn._saved_result.detach().numpy(), np.exp([1, 2]))
        z = x.pow(3)
        assert z.grad_fn._saved_exponent == 3
        np.testing.assert_array_equal(z.grad_fn._saved_self.detach().numpy(), [1.0, 2.0])


def test_saved_tensor_changed_in_place_still_raises():
    """The name look-up reads the SavedVariable, whose version check still runs."""
    for m in (strata, torch):
        x = m.ones(2, requires_grad=True)
        y = x.exp()
        z = y * 1
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward(retain_graph=True)
            y.sum().backward()


def test_not_saved_name_raises_attribute_error():
    y = strata.ones(2, requires_grad=True) * 2
    with pytest.raises(AttributeError):
        _ = y.grad_fn.no_such_argument


def test_dispatch_trace_from_import_shows_the_redispatch_below_autograd():
    """With STRATA_SHOW_DISPATCH_TRACE=1 the trace is on before the autograd layer is imported:
    its inlined redispatch must still step aside for the reporting one."""
    code = "import strata; x = strata.ones(2, requires_grad=True); y = x * 2; y.add_(1)"
    lines = _run(code, STRATA_SHOW_DISPATCH_TRACE="1").stdout.splitlines()
    assert any("[redispatch] op=[aten::mul.Tensor], key=[CPU]" in line for line in lines)
    assert any("[redispatch] op=[aten::add_.Tensor], key=[CPU]" in line for line in lines)


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int32", "int64", "float16",
                                  "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_result_type_of_one_dtype_matches_torch(name):
    """``result_type``'s shortcut for tensors of one dtype (any mix of 0-dim and not)."""
    for shapes in [((2,), (2,)), ((), ()), ((), (2,)), ((2,), ())]:
        got = strata.result_type(*(strata.ones(s, dtype=getattr(strata, name)) for s in shapes))
        want = torch.result_type(*(torch.ones(s, dtype=getattr(torch, name)) for s in shapes))
        assert str(got).removeprefix("strata.") == str(want).removeprefix("torch.")
