"""Note [Planned buffers] (plan.py): a graph program's buffers are views of one arena, each
placed over buffers no longer read. Placement never overlaps two buffers alive at once
(hypothesis over lifetimes and sizes); the planned graph's results equal the Python wrapper's
bit for bit and torch's to rounding, and a buffer whose indices are checked after the program
stays alive to the end."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import config
from strata.backends.cpu import native_pool
from strata.compile.aot import make_fx
from strata.compile.inductor import compile_fx as cfx
from strata.compile.inductor import plan

pytestmark = pytest.mark.skipif(native_pool.library() is None,
                                reason="graph programs run on the native pool")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 20), st.integers(1, 5000)),
                min_size=1, max_size=25))
def test_buffers_alive_together_never_share_bytes(buffers):
    spans = {f"b{i}": (start, start + length) for i, (start, length, _) in enumerate(buffers)}
    sizes = {f"b{i}": size for i, (_, _, size) in enumerate(buffers)}
    offsets, total = plan.arena_offsets(spans, sizes)
    for name, offset in offsets.items():
        assert offset % plan.ARENA_ALIGN == 0 and offset + sizes[name] <= total
    names = list(spans)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (sa, ea), (sb, eb) = spans[a], spans[b]
            if sa < eb and sb < ea:     # alive at once
                assert offsets[a] + sizes[a] <= offsets[b] or \
                    offsets[b] + sizes[b] <= offsets[a], (a, b, offsets)


def test_lifetimes_end_at_the_last_readers_del_but_outputs_and_checked_indices_live_on():
    wrapper = """def call(args):
    (primals_1,) = args
    a_primals_1 = _input(primals_1, (4,), (4,), (1,))
    a_buf0 = np.empty((4,), np.int64)
    _run_kernel(lib, 'kernel0', 1, 4, (a_primals_1, a_buf0,))
    _check_indices(a_buf0, 3)  # Check
    a_buf1 = np.empty((4,), np.float32)
    _run_kernel(lib, 'kernel1', 1, 4, (a_buf0, a_buf1,))
    del a_buf0
    a_buf2 = np.empty((4,), np.float32)
    _run_kernel(lib, 'kernel2', 1, 4, (a_buf1, a_buf2,))
    del a_buf1
    a_buf3 = np.empty((4,), np.float32)
    _run_kernel(lib, 'kernel3', 1, 4, (a_buf2, a_buf3,))
    del a_buf2
    return [_tensor(a_buf3, 'float32')]
"""
    spans = plan.lifetimes(wrapper)
    lines = len(wrapper.rstrip("\n").split("\n"))
    assert spans["buf0"][1] == lines          # its indices are checked after the program
    assert spans["buf1"][1] < spans["buf3"][0] and spans["buf3"][1] == lines
    offsets, total = plan.arena_offsets(spans, {name: 16 for name in spans})
    assert offsets["buf3"] == offsets["buf1"]     # buf1's bytes, free again, are reused
    assert total == 3 * plan.ARENA_ALIGN
    planned = plan.planned_source(wrapper, plan.plannable(wrapper), offsets, total)
    assert "arena = _aligned(np.empty(" in planned and "np.empty((" not in planned
    assert planned.count("_arena_view(arena, ") == 4


def _chain(x, w):
    h = (x @ w).relu()
    h = (h * 2 + 1).tanh() @ w.t()
    return ((h.sigmoid() - 0.5) @ w).exp()


@pytest.mark.parametrize("planned_buffers", [True, False])
def test_a_planned_graph_with_reused_buffers_equals_the_wrapper_and_torch(monkeypatch,
                                                                          planned_buffers):
    monkeypatch.setattr(config, "planned_buffers", planned_buffers)
    rng = np.random.default_rng(0)
    x = strata.tensor(rng.standard_normal((96, 64)).astype(np.float32))
    w = strata.tensor(rng.standard_normal((64, 64)).astype(np.float32) / 8)
    compiled = cfx.compile_fx(make_fx(_chain)(x, w), [x, w])
    first = compiled(x, w)[0].numpy().copy()     # the Python wrapper
    for _ in range(8):
        got = compiled(x, w)[0].numpy()
    program = compiled.planner.program
    assert program is not None
    assert bool(program.offsets) == planned_buffers
    if planned_buffers:     # some buffer sits over another's bytes
        assert len(set(program.offsets.values())) < len(program.offsets)
    np.testing.assert_array_equal(got, first)
    tx, tw = torch.tensor(x.numpy()), torch.tensor(w.numpy())
    expected = _chain(tx, tw).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_an_arena_past_the_heaps_largest_block_keeps_separate_buffers(monkeypatch):
    """An arena glibc would map afresh each call (past ``ARENA_MAX_BYTES``) is not used: the
    buffers keep their own allocations, and the program its results."""
    monkeypatch.setattr(plan, "ARENA_MAX_BYTES", 1024)
    rng = np.random.default_rng(1)
    x = strata.tensor(rng.standard_normal((96, 64)).astype(np.float32))
    w = strata.tensor(rng.standard_normal((64, 64)).astype(np.float32) / 8)
    compiled = cfx.compile_fx(make_fx(_chain)(x, w), [x, w])
    first = compiled(x, w)[0].numpy().copy()
    for _ in range(8):
        got = compiled(x, w)[0].numpy()
    assert compiled.planner.program is not None and compiled.planner.program.offsets == {}
    np.testing.assert_array_equal(got, first)
