"""Note [Cat slices] (compile/inductor/concat.py): a cat whose inputs the graph's kernels
compute is stored into slices of its output by those kernels (no Fallback cat, no copy).
Compiled results equal eager strata's bit for bit (a cat is a copy) and PyTorch's values, for
cats along every dim of 2-5 inputs made by pointwise and reduction kernels, mixed with graph
inputs and inputs read elsewhere, and through autograd (the tiny GPT's packed projection)."""

import numpy as np
import pytest
import torch
from helpers import recording_backend
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::UserWarning")   # a capture that fell back

FALLBACK_CAT = "Fallback(<OpOverload aten::cat>)"
SLICE = "(a slice of a cat)"
# how each cat input is made from its own graph input: a pointwise formula, a reduction (over
# an extra last dim), the graph input itself, or a formula also read by another output
KINDS = ["pointwise", "sum", "amax", "input", "shared"]


def _piece(m, kind, x):
    if kind == "pointwise":
        return (x * 3 + 1).abs()
    if kind == "sum":
        return x.sum(-1)
    if kind == "amax":
        return x.amax(-1)
    if kind == "input":
        return x
    return x * 3 - 1      # "shared": also returned times 2 below


def _function(kinds, dim):
    def fn(m, *xs):
        pieces = [_piece(m, kind, x) for kind, x in zip(kinds, xs)]
        shared = [p * 2 for kind, p in zip(kinds, pieces) if kind == "shared"]
        return (m.cat(pieces, dim).neg(), *shared)
    return fn


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape) * 4
    if dtype.startswith("float"):
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size)] = rng.choice([np.nan, np.inf, -0.0])
    return x.astype(dtype)


def _compare(fn, arrays):
    """Compiled == eager strata bit for bit, and == PyTorch's values; the compiled graph."""
    xs = [strata.tensor(a) for a in arrays]
    run = compile_fx(make_fx(lambda *t: fn(strata, *t))(*xs), xs)
    got = [g.numpy() for g in run(*xs)]
    eager = [e.numpy() for e in fn(strata, *xs)]
    want = [w.numpy() for w in fn(torch, *[torch.tensor(a) for a in arrays])]
    for g, e, w in zip(got, eager, want):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert g.tobytes() == e.tobytes()
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)   # (sums in another order)
    return run


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       kinds=st.lists(st.sampled_from(KINDS), min_size=2, max_size=5),
       dtype=st.sampled_from(["float32", "float64", "int64"]), data=st.data())
def test_cat_of_kernel_outputs_equals_eager_and_torch(shape, kinds, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    d = data.draw(st.integers(0, len(shape) - 1))
    arrays = []
    for kind in kinds:
        size = list(shape)
        size[d] = data.draw(st.integers(1, 3))
        arrays.append(_values(rng, size + [3] if kind in ("sum", "amax") else size, dtype))
    run = _compare(_function(kinds, d), arrays)
    ir = run.ir_post_fusion
    innermost = d == len(shape) - 1 and sum(a.shape[d] for a in arrays) > 1
    computed = any(kind != "input" for kind in kinds)
    realized = any(kind in ("sum", "amax", "shared") for kind in kinds)
    # along the innermost dim every computed input lands in its slice; along an outer dim
    # inputs realized anyway do (a one-element formula is one), formulas stay in the select
    if realized or (innermost and computed):
        assert SLICE in ir, ir
    if not computed:
        assert SLICE not in ir, ir
    assert (FALLBACK_CAT in ir) == (innermost and not computed), ir


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_a_reduction_and_a_shared_value_store_into_their_slices(dim):
    """Both inputs are realized anyway (a row sum; a value another output reads): each is
    stored straight into its slice, the other output reads the slice, nothing is copied."""
    rng = np.random.default_rng(dim)
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def fn(m, a, b):
        shared = b * 3 - 1
        return m.cat([a.sum(-1), shared], dim), shared * 2
    run = _compare(fn, [a, b])
    ir = run.ir_post_fusion
    assert ir.count(SLICE) == 2 and "Fallback" not in ir, ir
    wrapper = run.output_code.split("#include")[0]
    assert wrapper.count("np.empty(") == 2, wrapper   # the cat's output and shared * 2 only


def test_a_reader_of_a_slice_waits_for_the_next_kernel(two_threads):
    """A value read at another row than the one being computed (a flip) of a slice written in
    the same kernel would race with the thread writing that row: it reads the finished slice
    in the next kernel (rows split over two threads here)."""
    a, b = (np.arange(512 * 64, dtype=np.float32).reshape(512, 64) * s for s in (1, -1))

    def fn(m, a, b):
        x, y = a * 2 + 1, b.abs() - 1
        return m.cat([x, y], 1), x.flip(0) + y
    run = _compare(fn, [a, b])
    ir = run.ir_post_fusion
    assert "Fallback" not in ir and ir.count("kernel") == 2, ir


def test_a_kernel_reads_earlier_slices_through_the_pointer_that_writes_its_own(two_threads):
    """The second input is made from the first's slice (read at other rows): its kernel reads
    the cat's output, written by the kernel before, and writes its own slice of it."""
    a = np.arange(512 * 64, dtype=np.float64).reshape(512, 64) / 7

    def fn(m, a):
        x = a * 2 + 1
        return m.cat([x, x.flip(0) * 3], 1), x - 1
    run = _compare(fn, [a])
    ir, source = run.ir_post_fusion, run.output_code.split("#include")[1]
    assert ir.count(SLICE) == 2 and ir.count("kernel") == 3, ir
    assert "const double* restrict buf0" not in source   # read through its written pointer


def test_graph_inputs_and_eager_results_are_copied_into_their_slices():
    """Inputs the graph's kernels do not compute (a graph input, a GEMM's output) are copied
    into their slices by a generated kernel beside the computed ones: no Fallback cat."""
    rng = np.random.default_rng(1)
    a, w, c = (rng.standard_normal(s).astype(np.float32) for s in ((6, 4), (4, 3), (6, 5)))

    def fn(m, a, w, c):
        return (m.cat([a @ w, c * 2, a], 1) + 1,)
    run = _compare(fn, [a, w, c])
    ir = run.ir_post_fusion
    assert FALLBACK_CAT not in ir and ir.count(SLICE) == 3, ir


def test_a_cat_of_graph_inputs_keeps_the_eager_copies():
    a, b = np.ones((3, 4), np.float32), np.zeros((3, 2), np.float32)
    run = _compare(lambda m, a, b: (m.cat([a, b], 1),), [a, b])
    assert FALLBACK_CAT in run.ir_post_fusion and SLICE not in run.ir_post_fusion


def test_a_graph_output_input_keeps_its_own_buffer():
    """An input the graph also returns keeps its own (contiguous) buffer and is copied."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    run = _compare(lambda m, a: (m.cat([a * 5, a * 2], 1), a * 5), [a])
    assert FALLBACK_CAT not in run.ir_post_fusion


def test_packed_projection_backward_has_no_fallback_cat():
    """nn.MultiheadAttention's packed in-projection (the tiny GPT's): the backward's q/k/v
    gradients are stored into slices of one (batch, seq, 3*d) buffer that the bias gradient
    and the weight GEMM read; the gradients are eager's."""
    strata.manual_seed(0)
    layer = strata.nn.TransformerEncoderLayer(16, 2, 32, 0.0, batch_first=True, norm_first=True)
    mask = strata.nn.Transformer.generate_square_subsequent_mask(6)
    x = strata.randn(3, 6, 16)

    def step(x):
        return layer(x, src_mask=mask, is_causal=True).pow(2).mean()
    runs = []
    strata.compile(step, backend=recording_backend(runs))(x).backward()
    grads = [p.grad.clone() for p in layer.parameters()]
    layer.zero_grad(set_to_none=True)
    step(x).backward()
    for p, g in zip(layer.parameters(), grads):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), atol=1e-5, rtol=1e-4)
    backward = runs[-1].ir_post_fusion
    assert "aten::cat" not in backward and backward.count(SLICE) == 3, backward


def test_gradients_through_a_cat_of_computed_inputs_match_eager_and_torch():
    """Autograd through a compiled cat of a pointwise value, a row sum and a graph input."""
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s).astype(np.float64) for s in ((4, 3), (4, 2, 5), (4, 2))]

    def run(m, compiled):
        xs = [m.tensor(a, requires_grad=True) for a in arrays]

        def f(a, b, c):
            return (m.cat([a.sin(), b.sum(-1), c], 1) ** 2).sum()
        (m.compile(f, backend="inductor") if compiled else f)(*xs).backward()
        return [x.grad.numpy() for x in xs]
    got, eager = run(strata, True), run(strata, False)
    for g, e, w in zip(got, eager, run(torch, False)):
        np.testing.assert_allclose(g, e, rtol=1e-12)
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_an_earlier_nodes_buffer_is_not_moved_into_a_slice():
    """A view that returns its input's buffer as it is (``view`` to the same shape) is planned
    in the cat, but the buffer is an earlier node's, whose formula readers read it by name:
    it stays, and is copied into the slice."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3, 5)).astype(np.float32), np.ones((4, 2), np.float32)

    def fn(m, a, b):
        y = a.sum(-1)
        return m.cat([y.view(4, 3), b * 2], 1), y * 2
    run = _compare(fn, [a, b])
    assert FALLBACK_CAT not in run.ir_post_fusion


def test_max_autotune_flat_variants_store_into_slices():
    """max-autotune times each pointwise kernel printed flat too (every dim a row): its
    stores follow the slice's strides as well."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((64, 32)).astype(np.float32) for _ in range(2))

    def fn(m, a, b):
        return (m.cat([a * 2, b.abs(), a - b], 1),)
    xs = [strata.tensor(a), strata.tensor(b)]
    run = compile_fx(make_fx(lambda *t: fn(strata, *t))(*xs), xs, max_autotune=True)
    for _ in range(2):      # the first call times the variants, the second runs the choice
        assert run(*xs)[0].numpy().tobytes() == fn(strata, *xs)[0].numpy().tobytes()
    assert run.ir_post_fusion.count(SLICE) == 3 and "_flat" in run.output_code


def test_tiny_gpt_training_step_has_no_fallback_cat():
    """benchmarks/compile.py's tiny GPT step (smaller sizes): forward, loss and backward
    compiled; each block's in-projection backward stores its q/k/v gradients into slices,
    and no graph has an eager cat left."""
    from benchmarks.training import _transformer

    strata.manual_seed(0)
    model, _, x, y = _transformer(strata, vocab=11, context=8, batch=2, d_model=16, nhead=2)
    runs = []

    def forward_backward(x, y):
        loss = strata.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss
    loss = strata.compile(forward_backward, backend=recording_backend(runs))(x, y)
    assert np.isfinite(loss.item())
    assert all(p.grad is not None and np.isfinite(p.grad.numpy()).all()
               for p in model.parameters())
    text = "".join(run.ir_post_fusion for run in runs)
    assert "aten::cat" not in text and text.count(SLICE) == 6, text   # 2 blocks x q, k, v


@pytest.mark.parametrize("dim", [0, 1])
def test_inputs_of_other_dtypes_are_converted_into_their_slices(dim):
    """A cat promotes its inputs (an int64 and a bool one into float32 here): those of
    another dtype are converted as they are copied into their slices, as eager's cat does."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    i = rng.integers(-(2 ** 40), 2 ** 40, (3, 4))
    b = rng.random((3, 4)) < 0.5

    def fn(m, a, i, b):
        return (m.cat([a * 3, i * 7, b], dim),)
    run = _compare(fn, [a, i, b])
    assert FALLBACK_CAT not in run.ir_post_fusion


def test_one_value_twice_in_a_cat_is_computed_into_both_slices():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    run = _compare(lambda m, a: (m.cat([a * 2, a.sum(1, keepdim=True)] * 2, 1),), [a])
    ir = run.ir_post_fusion
    assert FALLBACK_CAT not in ir and ir.count(SLICE) == 4, ir
