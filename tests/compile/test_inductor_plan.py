"""Note [Graph programs] (plan.py): once a compiled graph's row tiles are settled, one call is
recorded and later calls replay its kernels and products from one C call. The replayed
training step equals the Python wrapper's bit for bit and PyTorch's to rounding; graphs it does
not apply to keep the Python wrapper; a change of thread count records again; inputs of other
strides, out-of-range indices and foreign pointers are handled as the wrapper would."""

import numpy as np
import pytest
import torch

import strata
from strata import config
from strata.backends.cpu import native_pool
from strata.compile.aot import make_fx
from strata.compile.inductor import compile_fx as cfx
from strata.compile.inductor import plan

pytestmark = pytest.mark.skipif(native_pool.library() is None,
                                reason="graph programs run on the native pool")


def _graphs(monkeypatch):
    """Every CompiledGraph called from now on, in call order."""
    seen, original = [], cfx.CompiledGraph.__call__

    def spy(self, *args):
        if self not in seen:
            seen.append(self)
        return original(self, *args)
    monkeypatch.setattr(cfx.CompiledGraph, "__call__", spy)
    return seen


def _mlp_steps(m, steps, compiled=True, threads_after=None):
    """Losses and final weights of an MLP trained with Adam; the forward and backward compiled
    (the last layer's 10 columns make small products, the first two split ones). From the
    middle step on, ``threads_after`` threads (strata only)."""
    m.manual_seed(0)
    rng = np.random.default_rng(0)
    model = m.nn.Sequential(m.nn.Linear(96, 128), m.nn.ReLU(), m.nn.Linear(128, 128),
                            m.nn.ReLU(), m.nn.Linear(128, 10))
    for p, w in zip(model.parameters(), _weights(rng)):
        with m.no_grad():
            p.copy_(m.tensor(w))
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    x = m.tensor(rng.standard_normal((256, 96), dtype=np.float32))
    y = m.tensor(rng.integers(0, 10, 256))

    def fb(x, y):
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss
    run = m.compile(fb, backend="inductor") if compiled else fb
    losses = []
    for i in range(steps):
        if threads_after is not None and i == steps // 2:
            m.set_num_threads(threads_after)
        opt.zero_grad()
        losses.append(float(run(x, y).detach()))
        opt.step()
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def _weights(rng):
    shapes = [(128, 96), (128,), (128, 128), (128,), (10, 128), (10,)]
    return [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]


def test_replayed_training_equals_the_python_wrapper_and_torch(monkeypatch):
    graphs = _graphs(monkeypatch)
    losses, weights = _mlp_steps(strata, 8)
    assert len(graphs) == 2 and all(g.planner.program is not None for g in graphs)
    monkeypatch.setattr(config, "graph_programs", False)
    python_losses, python_weights = _mlp_steps(strata, 8)
    assert losses == python_losses
    for a, b in zip(weights, python_weights):
        np.testing.assert_array_equal(a, b)
    torch_losses, torch_weights = _mlp_steps(torch, 8, compiled=False)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-5)
    for a, b in zip(weights, torch_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_graphs_with_python_steps_keep_the_wrapper():
    x = strata.randn(6, 5)
    gm = make_fx(lambda x: strata.sort(x.exp(), 0)[0] * 2)(x)
    compiled = cfx.compile_fx(gm, [x])
    for _ in range(6):
        got = compiled(x)[0]
    assert compiled.planner.slots is None and compiled.planner.program is None
    np.testing.assert_allclose(got.numpy(), np.sort(np.exp(x.numpy()), 0) * 2, rtol=1e-6)


def test_a_new_thread_count_records_again(monkeypatch):
    graphs = _graphs(monkeypatch)
    before = strata.get_num_threads()
    try:
        strata.set_num_threads(2)
        losses, weights = _mlp_steps(strata, 12, threads_after=1)
        assert len(graphs) == 2 and all(g.planner.program is not None and
                                        g.planner.program.threads == 1 for g in graphs)
        monkeypatch.setattr(config, "graph_programs", False)
        strata.set_num_threads(2)
        python_losses, python_weights = _mlp_steps(strata, 12, threads_after=1)
    finally:
        strata.set_num_threads(before)
    assert losses == python_losses
    for a, b in zip(weights, python_weights):
        np.testing.assert_array_equal(a, b)


def test_an_input_of_other_strides_takes_the_python_wrapper():
    """A product's operand bound as it comes (``_checked``): the program was recorded for its
    strides, so a transposed operand of the same shape runs the Python wrapper."""
    a, b = strata.randn(64, 80), strata.randn(80, 96)
    gm = make_fx(lambda a, b: a @ b)(a, b)
    compiled = cfx.compile_fx(gm, [a, b])
    assert "_checked(" in compiled.output_code
    for _ in range(5):
        compiled(a, b)
    assert compiled.planner.program is not None
    other = strata.randn(96, 80).t()        # (80, 96), column-major
    got = compiled(a, other)[0].numpy()
    np.testing.assert_allclose(got, a.numpy() @ other.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compiled(a, b)[0].numpy(), a.numpy() @ b.numpy(), rtol=1e-5,
                               atol=1e-5)


def test_out_of_range_indices_raise_from_the_replayed_graph():
    weight = strata.randn(20, 16)
    fn = lambda w, i: (strata.nn.functional.embedding(i, w) * 2).sum(-1)
    idx = strata.tensor(np.arange(8) % 20)
    compiled = cfx.compile_fx(make_fx(fn)(weight, idx), [weight, idx])
    for _ in range(5):
        compiled(weight, idx)
    assert compiled.planner.program is not None
    bad = strata.tensor(np.array([0, 3, 25, 1, 2, 3, 4, 5]))
    with pytest.raises(IndexError, match="index out of range"):
        compiled(weight, bad)
    with pytest.raises(IndexError):
        torch.nn.functional.embedding(torch.tensor(bad.numpy()), torch.tensor(weight.numpy()))
    np.testing.assert_allclose(compiled(weight, idx)[0].numpy(),
                               (weight.numpy()[idx.numpy()] * 2).sum(-1), rtol=1e-6)


def test_pointers_outside_every_array_or_in_two_refuse_a_program():
    a, b = np.zeros(64, np.float32), np.zeros(64, np.float32)
    foreign = np.zeros(64, np.float32)
    table = np.zeros((1, 17), np.int64)
    table[0, 9:12] = [a.ctypes.data, b.ctypes.data, foreign.ctypes.data]
    recorder = plan.Recorder()
    recorder.gemms(table)
    assert plan.build(recorder, ["a", "b"], {"a_a": a, "a_b": b}) is None
    table[0, 11] = b.ctypes.data + 8
    recorder = plan.Recorder()
    recorder.gemms(table)
    program = plan.build(recorder, ["a", "b"], {"a_a": a, "a_b": b})
    assert program is not None
    assert sorted(map(tuple, program.relocations.tolist())) == [(9, 0, 0), (10, 1, 0),
                                                               (11, 1, 8)]
    overlapping = {"a_a": a, "a_b": a[4:]}       # a pointer into both: ambiguous
    recorder = plan.Recorder()
    table[0, 9:12] = [a.ctypes.data + 32, a.ctypes.data, a.ctypes.data]
    recorder.gemms(table)
    assert plan.build(recorder, ["a", "b"], overlapping) is None


def test_planned_wrapper_text():
    wrapper = """def call(args):
    (primals_1, primals_2,) = args
    a_primals_1 = _input(primals_1, (4,), (4,), (1,))
    a_primals_2 = _input(primals_2, (4,), (8,), (1,))
    _check_targets(a_primals_2, 10, -100)  # Check
    a_buf0 = np.empty((4,), np.float32)
    _run_kernel(lib, 'kernel0', 1, 4, (a_primals_1, a_buf0,))
    _check_indices(a_buf0, 3)  # Check
    a_buf1 = np.empty((4,), np.float32)
    _matmul(a_buf0, a_primals_1, a_buf1)  # Extern
    del a_buf0
    return [_tensor(a_buf1, 'float32')]
"""
    slots = plan.plannable(wrapper)
    assert slots == ["primals_1", "primals_2", "buf0", "buf1"]
    planned = plan.planned_source(wrapper, slots).split("\n")
    assert not any("_run_kernel" in line or "_matmul" in line or "del " in line
                   for line in planned)
    order = [next(i for i, line in enumerate(planned) if text in line)
             for text in ("_check_targets", "_run_plan", "_check_indices", "return")]
    assert order == sorted(order)     # input checks first, computed-index checks after
    assert plan.plannable(wrapper.replace("_check_indices(a_buf0", "_check_bounds(a_buf0")) \
        is None     # a check that must run before its kernels
    assert plan.plannable(wrapper.replace("    del a_buf0", "    r = targets['x'](a)")) is None


def test_a_launch_the_recording_missed_refuses_the_program(monkeypatch):
    """The first planned run starts from buffers filled with a byte pattern, so a product the
    recording did not see leaves its output wrong and the program is dropped."""
    monkeypatch.setattr(plan.Recorder, "gemms", lambda self, table, operands=(): None)
    a, b = strata.randn(64, 80), strata.randn(80, 96)
    x = strata.randn(64, 96)
    fn = lambda a, b, x: (a @ b).relu() + x
    compiled = cfx.compile_fx(make_fx(fn)(a, b, x), [a, b, x])
    for _ in range(6):
        got = compiled(a, b, x)[0].numpy()
    assert compiled.planner.program is None and compiled.planner.slots is None
    np.testing.assert_allclose(got, np.maximum(a.numpy() @ b.numpy(), 0) + x.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_graphs_whose_buffers_are_too_large_together_keep_the_wrapper(monkeypatch):
    """A program keeps every buffer alive until it ends (the wrapper frees each after its last
    reader): past ``PLAN_MAX_BYTES`` of them the graph keeps the Python wrapper."""
    x = strata.randn(256, 64)
    fn = lambda x: ((x * 2).exp() @ x.t()).relu()
    monkeypatch.setattr(plan, "PLAN_MAX_BYTES", 1024)
    compiled = cfx.compile_fx(make_fx(fn)(x), [x])
    for _ in range(6):
        got = compiled(x)[0].numpy()
    assert compiled.planner.program is None
    monkeypatch.setattr(plan, "PLAN_MAX_BYTES", 64 << 20)
    again = cfx.compile_fx(make_fx(fn)(x), [x])
    for _ in range(6):
        np.testing.assert_array_equal(again(x)[0].numpy(), got)
    assert again.planner.program is not None


def _settle_then(fn, first, later, calls=6):
    """``fn`` compiled, called ``calls`` times on ``first`` (measured, then recorded), then on
    ``later``: the result of that last call."""
    compiled = cfx.compile_fx(make_fx(fn)(*first), list(first))
    for _ in range(calls):
        compiled(*first)
    return compiled, compiled(*later)[0].numpy()


def test_products_off_the_table_keep_the_wrapper():
    """A matrix-vector product runs ``np.dot``, which a recording cannot replay: the graph
    keeps the Python wrapper even where the poisoned run could not tell (a ReLU of a product
    negative everywhere at recording time)."""
    rng = np.random.default_rng(0)
    x = strata.tensor(np.abs(rng.standard_normal((64, 32))).astype(np.float32))
    fn = lambda x, w: strata.nn.functional.linear(x, w).relu()
    negative, positive = (strata.tensor(np.full((1, 32), v, np.float32)) for v in (-1, 1))
    compiled, got = _settle_then(fn, (x, negative), (x, positive))
    assert compiled.planner.program is None
    np.testing.assert_allclose(got, np.maximum(x.numpy() @ positive.numpy().T, 0), rtol=1e-6)


def test_operand_copies_are_never_relocated_into_buffers():
    """A strided operand is copied for BLAS, and the copy freed after the product: its memory
    must not be mistaken for a later buffer's (the recording holds every operand)."""
    rng = np.random.default_rng(1)
    x, w = (strata.tensor(rng.standard_normal(s).astype(np.float32))
            for s in ((128, 256), (128, 96)))
    fn = lambda x, w: (x[:, ::2] @ w).relu() + 1
    x2 = strata.tensor(rng.standard_normal((128, 256)).astype(np.float32))
    got = _settle_then(fn, (x, w), (x2, w))[1]
    np.testing.assert_allclose(got, np.maximum(x2.numpy()[:, ::2] @ w.numpy(), 0) + 1,
                               rtol=1e-5, atol=1e-5)


def test_one_array_bound_to_two_inputs_is_not_planned():
    """Recorded with one tensor passed twice, a kernel's two arguments are one array: the
    program could not tell them apart later, so there is none."""
    x, y = strata.randn(64, 64), strata.randn(64, 64)
    compiled = cfx.compile_fx(make_fx(lambda a, b: a * 2 + b)(x, y), [x, y])
    for _ in range(6):
        compiled(x, x)
    assert compiled.planner.program is None
    np.testing.assert_allclose(compiled(x, y)[0].numpy(), x.numpy() * 2 + y.numpy(), rtol=1e-6)


def test_a_product_with_its_own_transpose_keeps_eagers_bits():
    """``np.dot`` computes ``x @ x.T`` with syrk (symmetric, its own bits): the compiled
    product keeps that call, as eager's."""
    for shape in ((20, 300), (100, 37)):
        x = strata.tensor(np.random.default_rng(2).standard_normal(shape).astype(np.float32))
        compiled = cfx.compile_fx(make_fx(lambda x: x @ x.t())(x), [x])
        for _ in range(6):
            got = compiled(x)[0].numpy()
        np.testing.assert_array_equal(got, (x @ x.t()).numpy())
        np.testing.assert_array_equal(got, got.T)
