"""Fewer launches around the opencl device's embedding (compile/inductor/opencl_embedding.py,
opencl_checks.py, opencl_loss.py): ``embedding`` checks and gathers in one launch,
``embedding_dense_backward`` writes the weight gradient in one, ``index_add_`` checks its
indices in its own kernel, ``embedding_renorm_`` (``max_norm``) is one kernel; values and
gradients against PyTorch's CPU, the index errors at the next sync point with the tensors
untouched, and the launch counts pinned."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int64", "bool"]
# the launch counter is cleared before the counted call of each example
COUNTED = [HealthCheck.function_scoped_fixture]
FLOATING = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1e-2}


def _weights(rows, cols, dtype, seed=0):
    values = np.random.default_rng(seed).standard_normal((rows, cols)) * 3
    return torch.tensor(values).to(getattr(torch, dtype))


def _strata(t):
    """The torch tensor ``t`` as a strata tensor on opencl (half dtypes through float32)."""
    if t.dtype in (torch.float16, torch.bfloat16):
        return strata.tensor(t.float().numpy()).to(getattr(strata, str(t.dtype)[6:])).to("opencl")
    return strata.tensor(t.numpy()).to("opencl")


def _numpy(t):
    """A strata or torch tensor's values (half dtypes widened: NumPy has no bfloat16)."""
    half = str(t.dtype).split(".")[-1] in ("float16", "bfloat16")
    return (t.float() if half else t).cpu().numpy()


@settings(max_examples=25, deadline=None, suppress_health_check=COUNTED)
@given(dtype=st.sampled_from(DTYPES), index_shape=st.lists(st.integers(0, 3), max_size=4),
       index_dtype=st.sampled_from(["int64", "int32"]), transposed=st.booleans(),
       seed=st.integers(0, 99))
def test_embedding_is_one_launch_matching_torch(dtype, index_shape, index_dtype, transposed,
                                                seed, launches):
    weight = _weights(7, 5, dtype, seed)
    indices = torch.tensor(np.random.default_rng(seed).integers(0, 7, index_shape)).to(
        getattr(torch, index_dtype))
    w = _strata(weight)
    if transposed:      # a weight with strides of its own: the kernel reads through them
        weight = weight.t().contiguous().t()
        w = w.t().contiguous().t()
    i = _strata(indices)
    launches.clear()
    out = strata.nn.functional.embedding(i, w)
    assert launches == ["aten::embedding"] * bool(out.numel())
    want = torch.nn.functional.embedding(indices, weight)
    assert tuple(out.shape) == tuple(want.shape) and str(out.dtype)[7:] == str(want.dtype)[6:]
    np.testing.assert_array_equal(_numpy(out), _numpy(want))


@pytest.mark.parametrize("bad", [7, -1, 100])
def test_a_bad_index_raises_torchs_error_at_the_next_sync(bad):
    """As a CUDA device-side assert: the op returns, the error comes at ``.cpu()`` (the first
    bad index's row reads row 0 meanwhile); the device stays usable after it."""
    weight = _weights(7, 5, "float32")
    with pytest.raises(IndexError) as want:
        torch.nn.functional.embedding(torch.tensor([1, bad, 2]), weight)
    w = _strata(weight)
    out = strata.nn.functional.embedding(_strata(torch.tensor([1, bad, 2])), w)
    with pytest.raises(IndexError) as got:
        out.cpu()
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(w.cpu().numpy(), weight.numpy())
    fine = strata.nn.functional.embedding(_strata(torch.tensor([3])), w)
    np.testing.assert_array_equal(fine.cpu().numpy(), weight[[3]].numpy())


def test_what_the_fused_kernel_does_not_cover_still_checks():
    """Index tensors of five dims (checked on the host, at the op) and an empty embedding dim
    (a separate check kernel) take the general path, with the same error."""
    weight = _weights(4, 3, "float32")
    index = torch.zeros((1, 1, 1, 2, 2), dtype=torch.int64)
    index[0, 0, 0, 1, 1] = 4
    with pytest.raises(IndexError, match="index out of range in self"):
        strata.nn.functional.embedding(_strata(index), _strata(weight))
    index[0, 0, 0, 1, 1] = 3
    out = strata.nn.functional.embedding(_strata(index), _strata(weight))
    np.testing.assert_array_equal(out.cpu().numpy(), weight[index].numpy())
    strata.nn.functional.embedding(_strata(torch.tensor([9])), strata.zeros(4, 0, device="opencl"))
    with pytest.raises(IndexError, match="index out of range in self"):
        strata.opencl.synchronize()      # an empty result's .cpu() copies nothing: no sync


@settings(max_examples=20, deadline=None, suppress_health_check=COUNTED)
@given(dtype=st.sampled_from(sorted(FLOATING)), index_shape=st.lists(st.integers(0, 4),
                                                                     max_size=3),
       padding_idx=st.sampled_from([None, 0, 3, -2]), scale=st.booleans(),
       strided=st.booleans(), seed=st.integers(0, 99))
def test_embedding_backward_is_one_launch_matching_torch(dtype, index_shape, padding_idx, scale,
                                                         strided, seed, launches):
    """``EmbeddingBackward0`` -> ``embedding_dense_backward``: one kernel, with padding_idx and
    scale_grad_by_freq (three launches before: a zero fill, an index check, the sums), for a
    gradient with strides of its own too (read through them, not copied)."""
    rng = np.random.default_rng(seed)
    weight = _weights(6, 4, dtype, seed).requires_grad_()
    indices = torch.tensor(rng.integers(0, 6, index_shape))
    grad = torch.tensor(rng.standard_normal((*index_shape, 4))).to(weight.dtype)
    torch.nn.functional.embedding(indices, weight, padding_idx, scale_grad_by_freq=scale) \
        .backward(grad)
    w = _strata(weight.detach()).requires_grad_()
    out = strata.nn.functional.embedding(_strata(indices), w, padding_idx,
                                         scale_grad_by_freq=scale)
    g = _strata(grad.movedim(-1, 0).contiguous()).movedim(0, -1) if strided else _strata(grad)
    launches.clear()
    out.backward(g)
    assert launches == ["aten::embedding_dense_backward"]
    tol = FLOATING[dtype]
    np.testing.assert_allclose(_numpy(w.grad), _numpy(weight.grad), rtol=tol, atol=tol)


def test_embedding_backward_of_five_dim_indices_matches_torch():
    rng = np.random.default_rng(0)
    indices = torch.tensor(rng.integers(0, 5, (2, 1, 2, 1, 3)))
    grad = torch.tensor(rng.standard_normal((2, 1, 2, 1, 3, 4)))
    weight = _weights(5, 4, "float64").requires_grad_()
    torch.nn.functional.embedding(indices, weight).backward(grad)
    w = _strata(weight.detach()).requires_grad_()
    strata.nn.functional.embedding(_strata(indices), w).backward(_strata(grad))
    np.testing.assert_allclose(w.grad.cpu().numpy(), weight.grad.numpy(), rtol=1e-12)


def test_embedding_double_backward_matches_torch():
    """``embedding_dense_backward``'s own derivative, ATen's ``embedding_dense_double_backward``
    (padding_idx's lookups get no gradient)."""
    rng = np.random.default_rng(0)
    weight, grad = rng.standard_normal((6, 3)), rng.standard_normal((2, 4, 3))
    indices = np.array([[0, 2, 2, 5], [1, 2, 0, 0]])
    results = []
    for lib, device in ((strata, "opencl"), (torch, "cpu")):
        w = lib.tensor(weight).to(device).requires_grad_()
        g = lib.tensor(grad).to(device).requires_grad_()
        out = lib.nn.functional.embedding(lib.tensor(indices).to(device), w, padding_idx=2)
        (gw,) = lib.autograd.grad(out, w, g, create_graph=True)
        (gw ** 3).sum().backward()
        results.append(g.grad.cpu().numpy())
    np.testing.assert_allclose(*results, rtol=1e-12, atol=1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=COUNTED)
@given(dim=st.integers(0, 1), positions=st.integers(1, 6), alpha=st.sampled_from([1, -2.5]),
       seed=st.integers(0, 99))
def test_index_add_is_one_launch_matching_torch(dim, positions, alpha, seed, launches):
    rng = np.random.default_rng(seed)
    target = torch.tensor(rng.standard_normal((5, 4)))
    index = torch.tensor(rng.integers(0, target.shape[dim], positions))
    source = torch.tensor(rng.standard_normal((positions, 4) if dim == 0 else (5, positions)))
    x = _strata(target)
    launches.clear()
    x.index_add_(dim, _strata(index), _strata(source), alpha=alpha)
    assert launches == ["aten::index_add_"]
    want = target.index_add_(dim, index, source, alpha=alpha)
    np.testing.assert_allclose(x.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_index_add_with_a_bad_index_raises_at_the_sync_and_leaves_self_untouched():
    """The first bad index is named, as the CPU names it, and no element was added to."""
    target = np.arange(15.0).reshape(5, 3)
    index, source = [0, 7, -1, 9], np.ones((4, 3))
    with pytest.raises(RuntimeError) as want:
        strata.tensor(target).index_add_(0, strata.tensor(index), strata.tensor(source))
    x = strata.tensor(target).to("opencl")
    x.index_add_(0, strata.tensor(index).to("opencl"), strata.tensor(source).to("opencl"))
    with pytest.raises(RuntimeError) as got:
        strata.opencl.synchronize()
    assert str(got.value) == str(want.value) == "index 7 is out of bounds for dimension 0 " \
                                                "with size 5"
    np.testing.assert_array_equal(x.cpu().numpy(), target)


@settings(max_examples=20, deadline=None, suppress_health_check=COUNTED)
@given(dtype=st.sampled_from(sorted(FLOATING)),
       norm_type=st.sampled_from([2.0, 1.0, 0.5, 3.0, 0.0, float("inf"), float("-inf")]),
       max_norm=st.sampled_from([0.5, 1.5, 100.0]), index_shape=st.lists(st.integers(0, 4),
                                                                         max_size=2),
       seed=st.integers(0, 99))
def test_embedding_renorm_is_one_launch_matching_torch(dtype, norm_type, max_norm, index_shape,
                                                       seed, launches):
    """Repeated indices rescale their row once; rows not named stay."""
    weight = _weights(6, 4, dtype, seed)
    indices = torch.tensor(np.random.default_rng(seed).integers(0, 6, index_shape))
    w = _strata(weight)
    launches.clear()
    strata.embedding_renorm_(w, _strata(indices), max_norm, norm_type)
    assert launches == ["aten::embedding_renorm_"] * bool(indices.numel())
    torch.embedding_renorm_(weight, indices, max_norm, norm_type)
    tol = FLOATING[dtype] * 10
    np.testing.assert_allclose(_numpy(w), _numpy(weight), rtol=tol, atol=tol)


def test_embedding_renorm_with_a_bad_index_raises_at_the_sync_and_writes_nothing():
    """The CPU device's error (torch's CPU says ``select(): index 9 out of range ...`` after
    rescaling the rows before it); no row is rescaled."""
    weight = np.random.default_rng(0).standard_normal((6, 4)) * 3
    with pytest.raises(IndexError) as want:
        strata.embedding_renorm_(strata.tensor(weight), strata.tensor([1, 9, -1]), 1.0, 2.0)
    w = strata.tensor(weight).to("opencl")
    strata.embedding_renorm_(w, strata.tensor([1, 9, -1]).to("opencl"), 1.0, 2.0)
    with pytest.raises(IndexError) as got:
        w.cpu()
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(w.cpu().numpy(), weight)


def test_embedding_module_with_max_norm_matches_torch():
    weight = _weights(8, 5, "float32")
    indices = torch.tensor([[0, 3, 3], [7, 0, 1]])
    layer = torch.nn.Embedding(8, 5, max_norm=1.0, _weight=weight.clone())
    want = layer(indices)
    ours = strata.nn.Embedding(8, 5, max_norm=1.0)
    with strata.no_grad():
        ours.weight.copy_(strata.tensor(weight.numpy()))
    ours = ours.to("opencl")
    got = ours(_strata(indices))
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.weight.detach().cpu().numpy(), layer.weight.detach().numpy(),
                               rtol=1e-6)


def test_a_training_step_through_embedding_and_layer_norm_has_no_check_or_fill_launch(launches):
    """The GPT's input path (token and position embeddings, layer norm, a linear head,
    cross_entropy): one launch for each embedding, each embedding gradient and the layer norm
    backward, no separate index check or zero fill; losses and gradients as torch's."""
    rng = np.random.default_rng(0)
    tokens, targets = rng.integers(0, 11, (3, 5)), rng.integers(0, 11, 15)
    params = [rng.standard_normal(s).astype(np.float32) for s in ((11, 8), (5, 8), (11, 8))]
    results = []
    for lib, device in ((strata, "opencl"), (torch, "cpu")):
        tok, pos, head = (lib.tensor(p).to(device).requires_grad_() for p in params)
        norm = lib.nn.LayerNorm(8).to(device)
        x = lib.tensor(tokens).to(device)
        launches.clear()
        h = lib.nn.functional.embedding(x, tok) + lib.nn.functional.embedding(
            lib.arange(5, device=device), pos)
        logits = lib.nn.functional.linear(norm(h), head).reshape(15, 11)
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor(targets).to(device))
        loss.backward()
        if lib is strata:
            counted = {name: launches.count(name) for name in set(launches)}
            assert counted["aten::embedding"] == 2
            assert counted["aten::embedding_dense_backward"] == 2
            assert counted["aten::native_layer_norm_backward"] == 1
            assert not {"check_index", "aten::index_add_"} & set(counted), sorted(counted.items())
            assert counted["aten::fill_.Scalar"] == 1       # backward()'s seed, ones_like(loss)
        results.append([loss, tok.grad, pos.grad, head.grad, norm.weight.grad])
    for got, want in zip(*results, strict=True):
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


@settings(max_examples=20, deadline=None, suppress_health_check=COUNTED)
@given(dtype=st.sampled_from(DTYPES), shape=st.sampled_from([(7,), (7, 3), (2, 7, 3), (7, 0)]),
       dim=st.integers(0, 1), index_shape=st.sampled_from([(), (0,), (4,)]),
       seed=st.integers(0, 99))
def test_index_select_matches_torch_in_one_launch_for_rows(dtype, shape, dim, index_shape, seed,
                                                           launches):
    """Dim 0 of a vector or matrix is the checked gather; the rest a check, then the gather."""
    dim = min(dim, len(shape) - 1) if shape[-1] else 0      # no index fits an empty dim
    source = _weights(int(np.prod(shape)), 1, dtype, seed).reshape(shape)
    index = torch.tensor(np.random.default_rng(seed).integers(0, shape[dim], index_shape))
    x, i = _strata(source), _strata(index)
    launches.clear()
    got = x.index_select(dim, i)
    if dim == 0 and len(shape) <= 2 and source.numel():
        assert launches == ["aten::index_select"] * bool(got.numel())
    want = source.index_select(dim, index)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(_numpy(got), _numpy(want))


@pytest.mark.parametrize("shape, dim", [((4,), 0), ((4, 3), 0), ((4, 3), 1), ((2, 4, 3), 1),
                                        ((4, 2, 3), 0)])
def test_index_select_with_a_bad_index_raises_the_cpus_error_at_the_sync(shape, dim):
    """torch's errors: ``IndexError`` for dim 0 (the opencl device gave dim 0 of a matrix the
    other dims' ``RuntimeError`` before), ``INDICES element ...`` for the others."""
    source = np.arange(float(np.prod(shape))).reshape(shape)
    index = [1, 7, 0]
    with pytest.raises((IndexError, RuntimeError)) as want:
        torch.tensor(source).index_select(dim, torch.tensor(index))
    with pytest.raises(type(want.value), match=str(want.value)):
        strata.tensor(source).index_select(dim, strata.tensor(index))
    out = strata.tensor(source).to("opencl").index_select(dim, strata.tensor(index).to("opencl"))
    with pytest.raises(type(want.value)) as got:
        out.cpu()
    assert str(got.value) == str(want.value)
