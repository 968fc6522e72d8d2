"""Which CPython versions capture: the running one has an opcode table (3.11, 3.12, 3.13), and on a
version without one ``strata.compile`` warns once and runs compiled functions eagerly."""

import platform
import sys
import warnings

import numpy as np
import pytest
import torch

import strata
from strata._dynamo import explain
from strata.compile.capture import eval_frame, translator


@pytest.fixture(autouse=True)
def _reset():
    strata._dynamo.reset()
    yield
    strata._dynamo.reset()


def f(x, y):
    return (x * 2 + y).relu().sum(0)


def test_running_python_has_a_table_and_captures_silently():
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if version not in translator.CAPTURED_VERSIONS:
        pytest.skip(f"Python {version} has no opcode table")
    assert translator.OPCODES and "CALL" in translator.BREAKABLE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = explain(f)(strata.ones(2, 3), strata.ones(2, 3))
    assert (report.graph_count, report.graph_break_count, report.op_count) == (1, 0, 4)


def test_no_table_warns_once_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(translator, "OPCODES", {})
    monkeypatch.setattr(eval_frame, "_warned_no_opcode_table", set())
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    with pytest.warns(UserWarning) as record:
        compiled = strata.compile(f, backend=backend)
    messages = [str(w.message) for w in record]
    assert len(messages) == 1
    assert f"Python {platform.python_version()}" in messages[0]
    assert "compiled functions run eagerly" in messages[0]
    assert record[0].filename == __file__   # points at the strata.compile call
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3), dtype=np.float32), rng.standard_normal((2, 3),
                                                                          dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # once: neither a second compile nor a call warns
        strata.compile(f, backend=backend)
        got = compiled(strata.from_numpy(a), strata.from_numpy(b))
    want = f(torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert graphs == []   # nothing was captured: the frame ran eagerly


def test_break_inside_nested_comprehensions_resumes_after_each():
    """A break inside a comprehension (3.12: inlined into the frame; 3.11: its own function)
    runs that comprehension in plain Python and compiles what follows it."""
    def g(lib, x, y):
        p = x * 2
        d = {k: print("break", end="\r") or v * k for k, v in enumerate((x, y))}
        q = [[print("break", end="\r") or u + w for w in (x,)] for u in (y,)]
        return lib.sin(d[0] + d[1] + p + q[0][0])

    a, b = np.arange(3, dtype=np.float32), np.ones(3, dtype=np.float32)
    report = explain(g)(strata, strata.from_numpy(a), strata.from_numpy(b))
    # x * 2 before the first; the adds and sin after the second (nothing between them)
    assert (report.graph_count, report.op_count) == (2, 5), report.break_reasons
    got = strata.compile(g, backend="eager")(strata, strata.from_numpy(a), strata.from_numpy(b))
    want = g(torch, torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
