"""index_add_ along dim 0 (an embedding's backward) and 1-D scatter inside inductor graphs: a
generated scatter-add (Note [Scatter-add] in compile/inductor/ir.py) whose sums are eager's, bit
for bit, after a Check step that raises eager's (PyTorch's) error before any kernel runs."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _accumulate(m, base, index, source, alpha):
    """A graph value (``base * 2``, read once) with rows of ``source * 3`` added into it."""
    return (base * 2).index_add_(0, index, source * 3, alpha=alpha) + 1


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 7), width=st.integers(1, 40), count=st.integers(0, 30),
       dtype=st.sampled_from(["float32", "float64"]),
       index_dtype=st.sampled_from(["int64", "int32"]),
       alpha=st.sampled_from([1, 2.5, -1]), seed=st.integers(0, 1000))
def test_index_add_is_eagers_bit_for_bit_and_torchs(rows, width, count, dtype, index_dtype,
                                                   alpha, seed):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((rows, width)).astype(dtype)
    source = (rng.standard_normal((count, width)) * 10.0 ** rng.integers(-3, 4, (count, 1)))
    source = source.astype(dtype)
    if count and width > 1:     # IEEE specials travel through the sums as eager's do
        source[0, :2] = [np.nan, -0.0]
        base[0, 1] = -0.0
    index = rng.integers(0, rows, count).astype(index_dtype)   # repeats: rows summed in order
    compiled = strata.compile(lambda b, i, s: _accumulate(strata, b, i, s, alpha),
                              backend="inductor")
    args = [strata.tensor(a) for a in (base, index, source)]
    got = compiled(*args).numpy()
    np.testing.assert_array_equal(got, _accumulate(strata, *args, alpha).numpy())
    want = _accumulate(torch, *[torch.tensor(a) for a in (base, index, source)], alpha)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


def test_embedding_backward_is_one_generated_scatter_add_per_table():
    weight = strata.randn(10, 4, requires_grad=True)
    index = strata.tensor([[1, 2, 1], [9, 0, 1]])
    scale = strata.randn(2, 3, 4) * 100     # the output gradient: rows summed per token

    def step(w, i, s):
        (strata.nn.functional.embedding(i, w) * s).sum().backward()
    strata.compile(step, backend="inductor")(weight, index, scale)
    got = weight.grad.numpy()
    weight.grad = None
    step(weight, index, scale)
    np.testing.assert_array_equal(got, weight.grad.numpy())

    gm = make_fx(lambda w, i, g: strata.zeros(10, 4).index_add_(0, i, g))(
        strata.randn(10, 4), strata.tensor([1, 2]), strata.randn(2, 4))
    run = compile_fx(gm, [strata.randn(10, 4), strata.tensor([1, 2]), strata.randn(2, 4)])
    post = run.ir_post_fusion
    assert "IndexAdd(" in post and "Fallback" not in post
    assert post.index("Check(") < post.index("IndexAdd(")


@pytest.mark.parametrize("bad", [10, -1])
def test_out_of_range_index_raises_eagers_error_before_any_update(bad):
    base = strata.randn(10, 4)
    source = strata.randn(3, 4)
    compiled = strata.compile(lambda b, i, s: _accumulate(strata, b, i, s, 1),
                              backend="inductor")
    compiled(base, strata.tensor([1, 2, 3]), source)
    kept = base.clone()
    message = f"index {bad} is out of bounds for dimension 0 with size 10"
    with pytest.raises(RuntimeError, match=message):
        compiled(base, strata.tensor([1, bad, 3]), source)
    np.testing.assert_array_equal(base.numpy(), kept.numpy())
    with pytest.raises(RuntimeError, match=message):
        torch.zeros(10, 4).index_add_(0, torch.tensor([1, bad, 3]), torch.ones(3, 4))


def test_a_later_read_of_self_sees_the_added_rows():
    """index_add_ writes in place: a later reader of ``self`` sees the sums (AOT's
    functionalization hands it the op's result, which the scatter-add's fresh buffer holds)."""
    def f(b, i, s):
        zeros = b * 0
        added = zeros.index_add_(0, i, s)
        return added + zeros
    args = (strata.randn(5, 3), strata.tensor([4, 4, 0]), strata.randn(3, 3))
    run = compile_fx(make_fx(f)(*args), list(args))
    assert "IndexAdd(" in run.ir_post_fusion
    np.testing.assert_array_equal(run(*args)[0].numpy(), f(*args).numpy())


@settings(max_examples=12, deadline=None)
@given(size=st.integers(1, 50), count=st.integers(0, 60),
       dtype=st.sampled_from(["float32", "float64", "int64"]), seed=st.integers(0, 1000))
def test_one_d_scatter_is_an_assignment_in_order_as_eagers(size, count, dtype, seed):
    """``scatter.src`` of 1-D tensors (AOT's view writes): the same kernel assigning, a
    repeated index keeping the last write; against eager strata and, with distinct indices,
    torch."""
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal(size) * 100).astype(dtype)
    source = (rng.standard_normal(count + 3) * 100).astype(dtype)
    index = rng.integers(0, size, count)

    def write(m, b, i, s):
        return m.scatter(b * 2, 0, i, s) + 1
    compiled = strata.compile(lambda b, i, s: write(strata, b, i, s), backend="inductor")
    args = [strata.tensor(a) for a in (base, index, source)]
    got = compiled(*args).numpy()
    np.testing.assert_array_equal(got, write(strata, *args).numpy())
    distinct = np.unique(index)
    rng.shuffle(distinct)
    want = write(torch, *[torch.tensor(a) for a in (base, distinct, source)])
    args[1] = strata.tensor(distinct)
    np.testing.assert_array_equal(compiled(*args).numpy(), want.numpy())


def test_one_d_scatter_out_of_range_raises_eagers_error():
    compiled = strata.compile(lambda b, i, s: strata.scatter(b * 2, 0, i, s),
                              backend="inductor")
    base, source = strata.randn(6), strata.randn(3)
    compiled(base, strata.tensor([0, 5]), source)
    message = "index 6 is out of bounds for dimension 0 with size 6"
    with pytest.raises(RuntimeError, match=message):
        compiled(base, strata.tensor([0, 6]), source)
    with pytest.raises(RuntimeError, match=message):
        torch.scatter(torch.zeros(6), 0, torch.tensor([0, 6]), torch.ones(3))


def test_wide_rows_split_over_threads_give_the_same_sums():
    """Columns split over the pool's threads (no two chunks share an element)."""
    before = strata.get_num_threads()
    strata.set_num_threads(2)
    try:
        rng = np.random.default_rng(0)
        base, source = rng.standard_normal((7, 40000)), rng.standard_normal((5, 40000))
        args = [strata.tensor(base.astype(np.float32)), strata.tensor(rng.integers(0, 7, 5)),
                strata.tensor(source.astype(np.float32))]
        compiled = strata.compile(lambda b, i, s: _accumulate(strata, b, i, s, 1),
                                  backend="inductor")
        np.testing.assert_array_equal(compiled(*args).numpy(),
                                      _accumulate(strata, *args, 1).numpy())
    finally:
        strata.set_num_threads(before)
