"""N-D scatters lowered (lowering_nn.py ``_scatter_along``, Note [Scatter-add] in ir.py):
``scatter`` (src), ``scatter_add`` and ``scatter_reduce(sum)`` along any dim of a float tensor
whose index covers the other dims, repeated indices included. Compiled == eager strata bit for
bit (the same adds in the same order; the last write wins), eager == PyTorch; an index out of
range raises eager's (PyTorch's) error first; no Fallback."""

import numpy as np
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

OPS = {
    "scatter": lambda m, x, d, i, s: x.scatter(d, i, s) * 2,
    "scatter_add": lambda m, x, d, i, s: x.scatter_add(d, i, s) + 1,
    "scatter_reduce sum": lambda m, x, d, i, s: x.scatter_reduce(d, i, s, "sum"),
}


@settings(max_examples=12, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(name=st.sampled_from(list(OPS)), shape=st.lists(st.integers(1, 6), min_size=2, max_size=4),
       data=st.data())
def test_compiled_scatter_equals_eager_and_torch(name, shape, data):
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    index_shape = list(shape)
    index_shape[d] = data.draw(st.integers(1, 7))        # more rows than the dim: repeats
    index = rng.integers(0, shape[d], index_shape)
    x = rng.standard_normal(shape).astype(np.float32)
    src = rng.standard_normal([n + 1 for n in index_shape]).astype(np.float32)  # larger src
    src[..., 0] = np.float32(1e8)           # sums whose order shows in the low bits
    fn = OPS[name]
    compiled = strata.compile(lambda x, i, s: fn(strata, x, d, i, s), backend="inductor")
    got = compiled(strata.tensor(x), strata.tensor(index), strata.tensor(src)).numpy()
    eager = fn(strata, strata.tensor(x), d, strata.tensor(index), strata.tensor(src)).numpy()
    want = fn(torch, torch.tensor(x), d, torch.tensor(index), torch.tensor(src)).numpy()
    assert got.tobytes() == eager.tobytes()
    # which of repeated writes wins is unspecified in PyTorch: scatter is compared without them
    repeated = (np.diff(np.sort(index, axis=d), axis=d) == 0).any()
    if name != "scatter" or not repeated:
        np.testing.assert_allclose(eager, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(OPS))
def test_lowered_without_a_fallback(name):
    x, i, s = strata.randn(3, 4, 5), strata.randint(0, 4, (3, 6, 5)), strata.randn(3, 6, 5)
    run = compile_fx(make_fx(lambda x, i, s: OPS[name](strata, x, 1, i, s))(x, i, s), [x, i, s])
    assert "Fallback" not in run.ir_post_fusion and "IndexAdd(" in run.ir_post_fusion


def test_an_index_out_of_range_raises_eagers_error_first():
    x, src = strata.zeros(2, 3), strata.ones(2, 3)
    index = strata.tensor([[0, 1, 2], [0, 3, 1]])
    compiled = strata.compile(lambda x, i, s: x.scatter_add(1, i, s), backend="inductor")
    with pytest.raises(RuntimeError) as got:
        compiled(x, index, src)
    with pytest.raises(RuntimeError) as want:
        torch.zeros(2, 3).scatter_add(1, torch.tensor([[0, 1, 2], [0, 3, 1]]), torch.ones(2, 3))
    assert str(got.value) == str(want.value)
    assert x.numpy().tolist() == [[0.0] * 3] * 2
