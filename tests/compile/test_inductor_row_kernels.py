"""Row kernels' fusion and storage: a node over another factoring of a kernel's rows joins it
(Note [Reshaped rows]), a cheap value read by several views is computed by each reader (Note
[Cheap shared values]), a column sum accumulates in a stack array (Note [Column
accumulators]), a row only later passes read stays in a row array (Note [Row arrays]).
Every compiled result against torch's on the same inputs."""

import numpy as np
import pytest
import torch

import strata
from strata.backends.cpu import array as cpu_array
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx


def _compiled(fn, *tensors):
    return compile_fx(make_fx(fn)(*tensors), list(tensors))


def _torch(x):
    return torch.tensor(x.numpy())


def _kernels(run):
    return run.ir_post_fusion.count(" node(s) fused")


def test_a_reshaped_reader_joins_the_kernel_of_its_rows():
    """``(x + b)`` over [4, 8] x [32] is kept (an output) and read as [32, 32] by erf: one
    kernel, which stores both."""
    x, b = strata.randn(4, 8, 32), strata.randn(32)

    def fn(x, b):
        y = x + b
        return y, strata.erf(y.reshape(32, 32))
    run = _compiled(fn, x, b)
    assert _kernels(run) == 1 and "2 node(s) fused" in run.ir_post_fusion
    y, e = run(x, b)
    ty = _torch(x) + _torch(b)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_allclose(e.numpy(), torch.erf(ty.reshape(32, 32)).numpy(), atol=4e-7)


def test_a_reshape_that_moves_elements_keeps_its_own_kernel():
    """A reader whose index is not each element's own place (a transpose after the reshape)
    must not join: it reads other rows, which other threads may still be writing."""
    x, b = strata.randn(4, 8, 32), strata.randn(32)

    def fn(x, b):
        y = x + b
        return y, strata.erf(y.reshape(32, 32).t())
    run = _compiled(fn, x, b)
    assert _kernels(run) == 2
    y, e = run(x, b)
    ty = _torch(x) + _torch(b)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_allclose(e.numpy(), torch.erf(ty.reshape(32, 32).t()).numpy(), atol=4e-7)


def test_a_cheap_value_read_by_several_slices_is_computed_by_each():
    """An attention's q, k, v: slices of one ``x @ w + b``; each head-major copy adds its own
    slice of the bias, the biased product is never written whole."""
    x, w, b = strata.randn(8, 16), strata.randn(16, 48), strata.randn(48)

    def fn(x, w, b):
        y = (x @ w + b).reshape(2, 4, 48)
        q, k, v = y[..., :16], y[..., 16:32], y[..., 32:]
        return (q.transpose(0, 1).contiguous(), k.transpose(0, 1).contiguous(),
                v.transpose(0, 1).contiguous())
    run = _compiled(fn, x, w, b)
    # the product's buffer and the three outputs: no buffer for the biased product
    assert run.output_code.count("np.empty(") == 4
    ty = (_torch(x) @ _torch(w) + _torch(b)).reshape(2, 4, 48)
    for got, part in zip(run(x, w, b), (ty[..., :16], ty[..., 16:32], ty[..., 32:])):
        np.testing.assert_allclose(got.numpy(), part.transpose(0, 1).numpy(), rtol=1e-6,
                                   atol=1e-5)


def test_a_costly_shared_value_is_still_computed_once():
    x = strata.randn(8, 32)

    def fn(x):
        y = strata.exp(x)
        return y[:, :16] * 2, y[:, 16:] + 1
    run = _compiled(fn, x)
    kernels = run.output_code[run.output_code.index("void kernel"):]
    assert kernels.count("strata_expf(") == 1
    ty = torch.exp(_torch(x))
    a, b = run(x)
    np.testing.assert_allclose(a.numpy(), (ty[:, :16] * 2).numpy(), rtol=2e-7)
    np.testing.assert_allclose(b.numpy(), (ty[:, 16:] + 1).numpy(), rtol=2e-7)


@pytest.mark.parametrize("columns", [128, 600])
@pytest.mark.parametrize("threads", [1, 2])
def test_column_sums_accumulate_in_blocks_and_equal_torch(columns, threads):
    """Note [Column accumulators]: 600 columns are three blocks of a chunk (256, 256, 88);
    two threads split the columns wherever the chunks fall, inside a cache line too."""
    rng = np.random.default_rng(0)
    x = strata.tensor(rng.standard_normal((97, columns)).astype(np.float32))
    y = strata.tensor(rng.standard_normal((97, columns)).astype(np.float32))
    before = cpu_array.NUM_THREADS
    strata.set_num_threads(threads)
    try:
        run = _compiled(lambda x, y: ((x * y).sum(0), x.sum(0)), x, y)
        assert "acc_" in run.output_code and "xb += 256" in run.output_code
        got = run(x, y)
    finally:
        strata.set_num_threads(before)
    tx, ty = _torch(x), _torch(y)
    np.testing.assert_allclose(got[0].numpy(), (tx * ty).sum(0).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1].numpy(), tx.sum(0).numpy(), rtol=1e-5, atol=1e-5)


def test_a_masked_softmax_keeps_its_scores_in_a_row_array():
    """The masked, scaled scores are read by the max, exp and (through exp) sum passes: a
    row array, no buffer; NaN rows (every score masked) as torch's."""
    rng = np.random.default_rng(1)
    s = strata.tensor(rng.standard_normal((3, 40, 40)).astype(np.float32))
    mask = strata.tensor(np.tril(np.ones((40, 40), bool)))
    mask[0, :] = False     # a row of -inf only: NaN in torch

    def fn(s, mask):
        return strata.softmax((s * 0.25).masked_fill(~mask, float("-inf")), -1)
    run = _compiled(fn, s, mask)
    kernel = run.output_code[run.output_code.index("void kernel"):]
    assert kernel.count("_row[40];") >= 2
    expected = torch.softmax((_torch(s) * 0.25).masked_fill(~_torch(mask), float("-inf")), -1)
    np.testing.assert_allclose(run(s, mask)[0].numpy(), expected.numpy(), rtol=1e-6,
                               atol=1e-7)
    assert np.isnan(run(s, mask)[0].numpy()[:, 0]).all()
