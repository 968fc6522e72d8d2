"""Dropout's mask fused with what reads it: pointwise nodes that read the draws at the element
being drawn are epilogues of the draws' kernel (Note [Random draws] in compile/inductor/ir.py),
computed from each lane's drawn value. Compiled forward and backward stay eager's bit for bit
from the same seed, whatever the size (the lanes' remainder) and the threads' chunks."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot.aot_autograd import aot_function
from strata.compile.inductor.compile_fx import compile_fx
from strata.compile.inductor.ir import is_flat_element

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
F = strata.nn.functional

MASKS = {
    "F.dropout": lambda x: F.dropout(x, 0.3, training=True),
    "nn.Dropout": strata.nn.Dropout(0.3).train(),
    "bernoulli": lambda x: x * strata.bernoulli(strata.empty_like(x), 0.8) / 0.8,
    "rand_like": lambda x: x * (strata.rand_like(x) > 0.25) / 0.75,
}


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    before = strata.get_num_threads()
    strata.set_num_threads(request.param)
    yield request.param
    strata.set_num_threads(before)


def _step(mask):
    """The masked input times a weight: the product reads the draws at their element."""
    def step(x, w):
        return mask(x) * w
    return step


def _seeded_calls(fn, x, w, seed, calls=2):
    """Each call's output and gradients, then eager's next draws (the stream moved on)."""
    strata.manual_seed(seed)
    results = []
    for _ in range(calls):
        leaves = [t.detach().requires_grad_() for t in (x, w)]
        out = fn(*leaves)
        (out * out).sum().backward()
        results += [out.detach().numpy(), leaves[0].grad.numpy(), leaves[1].grad.numpy()]
    return results + [strata.rand(3).numpy()]


def _assert_bitwise(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()


def _inputs(shape, dtype="float32"):
    rng = np.random.default_rng(len(shape))
    return (strata.tensor(rng.standard_normal(shape).astype(dtype)),
            strata.tensor(rng.standard_normal(shape).astype(dtype)))


def _graphs(fn, *inputs):
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(compile_fx(gm, example_inputs))
        return graphs[-1]
    return aot_function(fn, keep), graphs


@pytest.mark.parametrize("name", MASKS)
@settings(max_examples=6, deadline=None)
@given(shape=st.lists(st.integers(1, 23), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 31))
def test_masks_forward_and_backward_are_eagers_bit_for_bit(name, shape, dtype, seed):
    """Sizes mostly not a multiple of 4: the elements after the last four-lane step."""
    x, w = _inputs(shape, dtype)
    step = _step(MASKS[name])
    compiled = strata.compile(step, backend="inductor")
    _assert_bitwise(_seeded_calls(compiled, x, w, seed), _seeded_calls(step, x, w, seed))


@pytest.mark.parametrize("name", ["F.dropout", "rand_like"])
def test_chunks_of_any_length_draw_eagers_stream(threads, name):
    """The draws' kernel split into chunks of at least 7 rows of 77 (each chunk starts at an
    odd place of the stream; each row ends in a remainder of the four lanes) draws and
    computes what eager does, on 1 or 2 threads."""
    x, w = _inputs((301, 77))
    step = _step(MASKS[name])
    compiled, graphs = _graphs(step)
    want = _seeded_calls(step, x, w, 5, calls=3)
    strata.manual_seed(5)
    _seeded_calls(compiled, x, w, 5, calls=1)     # compiles forward and backward
    tuner = graphs[0].autotuner
    (draws,) = [name for name in tuner.choices if name in _draws_kernels(graphs[0])]
    tuner.unmeasured.pop(draws, None)
    tuner.choices[draws][2] = 7
    _assert_bitwise(_seeded_calls(compiled, x, w, 5, calls=3), want)


def _draws_kernels(graph):
    """Names of the kernels holding a RandomDraws node, from the post-fusion IR."""
    return re.findall(r"^(kernel\d+): .*\n  \S+ = RandomDraws", graph.ir_post_fusion, re.MULTILINE)


def test_the_scale_and_product_are_epilogues_and_an_unread_mask_gets_no_buffer():
    x, w = _inputs((5, 7))
    compiled, graphs = _graphs(_step(MASKS["F.dropout"]))
    for t in (x, w):
        t.requires_grad_()
    compiled(x, w).sum().backward()
    forward = graphs[0]
    post = forward.ir_post_fusion
    # one kernel: the draws, the scale, the dropout's output and its product with w
    assert post.count("kernel") == 1 and "4 node(s) fused" in post, post
    draws, *epilogues = re.findall(r"^  (buf\d+) = ", post, re.MULTILINE)
    assert "RandomDraws" in post.split("\n")[1] and len(epilogues) == 3
    signature = re.search(r"void kernel\d+\((.*)\)", forward.output_code).group(1)
    # the raw mask is read only in the kernel: a local; the scaled mask and the dropout's
    # output are saved for the backward, the product returned: each written
    assert f"{draws}," not in signature
    assert all(f"float* restrict {name}," in signature for name in epilogues)
    assert f"{draws}_row[y] / " in forward.output_code     # the scale reads the row array


def test_a_reshaped_reader_joins_and_others_do_not():
    """``mask.view(-1) * y`` reads the draws at their element; ``mask.t() * y`` and dropout2d's
    product (one draw per channel, broadcast over its pixels) do not."""
    def reshaped(x, y):
        return F.dropout(x, 0.5, training=True).view(60) * y.view(60)

    def transposed(x, y):
        return F.dropout(x, 0.5, training=True).t() * y.t()

    def channels(x, y):
        return F.dropout2d(x.view(3, 2, 5, 2), 0.5, training=True) * y.view(3, 2, 5, 2)
    for fn, fused in ((reshaped, True), (transposed, False), (channels, False)):
        compiled, graphs = _graphs(fn)
        x, y = _inputs((6, 10))
        strata.manual_seed(2)
        got = compiled(x, y)
        strata.manual_seed(2)
        assert got.numpy().tobytes() == fn(x, y).numpy().tobytes()
        assert (graphs[0].ir_post_fusion.count("kernel") == 1) == fused


def test_an_epilogue_joins_across_steps_it_does_not_read():
    """The product after an unrelated matmul joins the draws' kernel (dropout's product with
    the attention weights comes after the V projection's copy); one that reads a maximum
    computed after the draws cannot: it is not written yet when the draws run."""
    x, w = _inputs((9, 11))

    def passes(x, w):
        kept = F.dropout(x, 0.5, training=True)
        return w @ w.t(), kept * w

    def reads(x, w):
        kept = F.dropout(x, 0.5, training=True)
        return kept * w.amax(0)
    for fn, kernels in ((passes, 1), (reads, 3)):
        compiled, graphs = _graphs(fn)
        strata.manual_seed(4)
        got = compiled(x, w)
        strata.manual_seed(4)
        want = fn(x, w)
        _assert_bitwise([t.numpy() for t in got] if fn is passes else [got.numpy()],
                        [t.numpy() for t in want] if fn is passes else [want.numpy()])
        post = graphs[0].ir_post_fusion
        assert post.count("kernel") == kernels, post


def test_a_residual_layer_norm_joins_the_rows_and_a_sum_of_the_draws_does_not():
    """Once the draws' kernel has rows, the residual's layer_norm statistics (reductions over
    those rows reading an epilogue) join it as in Note [Row fusion]; a sum reading the draws
    themselves keeps a kernel of its own (the draws are a row array, not memory)."""
    x, w = _inputs((6, 33))

    def residual(x, w):
        kept = w + F.dropout(x, 0.2, training=True)
        return kept, F.layer_norm(kept, (33,))

    def summed(x, w):
        u = strata.rand_like(x)
        return x * u, u.sum(-1)
    for fn, kernels in ((residual, 1), (summed, 2)):
        compiled, graphs = _graphs(fn)
        strata.manual_seed(6)
        got = [t.detach().numpy() for t in compiled(x, w)]
        strata.manual_seed(6)
        want = [t.detach().numpy() for t in fn(x, w)]
        assert got[0].tobytes() == want[0].tobytes()
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
        post = graphs[0].ir_post_fusion
        assert post.count("kernel") == kernels, post


@pytest.mark.parametrize("index, ranges, element", [
    ("i0*64 + i1", (16, 64), True),
    ("((i0) / 64)*32768 + (i0) % 64*512 + i1", (1024, 512), True),
    ("i1*16 + i0", (16, 64), False),                          # a transpose
    ("((i0) / 64)*32768 + (i0) % 64*512 + i1", (1024, 256), False),
    ("i0*64 + i1 + 1", (16, 64), False),
    ("load(idx, i0)*64 + i1", (16, 64), False),             # a gather: not evaluated
    ("i0 % 0", (16,), False),
])
def test_flat_element_of_an_index(index, ranges, element):
    assert is_flat_element(index, ranges) == element
