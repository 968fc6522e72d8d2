"""In-place writes and views as PyTorch rules them, compared with PyTorch 2.13.

* The pieces of a multi-output view (``split``, ``chunk``, ``unbind``) may not be written in
  place, nor used after their base changed (Note [Multi-output views] in autograd/kernel.py): the
  error is PyTorch's, raised before anything changes.
* In-place view methods (``t_``, ``transpose_``, ``squeeze_``, ...) record PyTorch's in-place
  rows (``TBackward1``), with PyTorch's edges and gradients.
* A reduction given ``dim=None`` explicitly records ATen's ``dim`` overload (``SumBackward1``).
"""

import numpy as np
import pytest
import torch

import strata

X0 = np.arange(12.0).reshape(4, 3)


def _piece_of(m, requires_grad=True):
    return m.tensor(X0, requires_grad=requires_grad).clone()


def _outcome(m, fn):
    try:
        out = fn(m)
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok", None if out is None or out.grad_fn is None else type(out.grad_fn).__name__


def _nograd_piece_written(m):
    x = _piece_of(m)
    with m.no_grad():
        piece = x.split(2)[0]
    return piece.mul_(2)


def _written_in_nograd_then_used(m):
    x = _piece_of(m)
    piece = x.split(2)[0]
    with m.no_grad():
        piece.mul_(2)
    return piece.sum()


def _base_written_then_piece_used(m):
    x = _piece_of(m)
    piece = x.split(2)[0]
    x.mul_(2)
    return piece.sum()


MULTI_OUTPUT_CASES = {
    "split": lambda m: _piece_of(m).split(2)[1].mul_(2),
    "split_sizes": lambda m: _piece_of(m).split([1, 3])[1].zero_(),
    "unbind": lambda m: _piece_of(m).unbind(1)[2].add_(1),
    "chunk_copy": lambda m: _piece_of(m).chunk(2, 1)[1].copy_(m.zeros(4, 1)),
    "view_of_piece": lambda m: _piece_of(m).split(2)[0].view(-1).mul_(2),
    "select_of_piece": lambda m: _piece_of(m).split(2)[0][1].mul_(2),
    "setitem": lambda m: _piece_of(m).split(2)[0].__setitem__(0, 1.0),
    "inplace_view_method": lambda m: _piece_of(m).split(2)[0].unsqueeze_(0),
    "piece_of_leaf": lambda m: m.tensor(X0, requires_grad=True).split(2)[1].mul_(2),
    "base_written_then_piece_used": _base_written_then_piece_used,
    "written_in_nograd_then_used": _written_in_nograd_then_used,
    "piece_made_in_nograd": _nograd_piece_written,
    # allowed: no grad needed, a detached piece, an out-of-place op, slices (not one node)
    "no_grad_needed": lambda m: _piece_of(m, False).split(2)[0].mul_(2),
    "detached": lambda m: _piece_of(m).split(2)[0].detach().mul_(2),
    "out_of_place": lambda m: _piece_of(m).split(2)[0].mul(2),
    "tensor_split": lambda m: _piece_of(m).tensor_split(2)[0].mul_(2),
}


@pytest.mark.parametrize("case", MULTI_OUTPUT_CASES)
def test_multi_output_view_inplace_as_torch(case):
    fn = MULTI_OUTPUT_CASES[case]
    assert _outcome(strata, fn) == _outcome(torch, fn)


def test_refused_write_into_piece_changes_nothing():
    for m in (strata, torch):
        x = _piece_of(m)
        a, b = x.split(2)
        versions = (x._version, a._version, b._version)
        with pytest.raises(RuntimeError, match="Output 1 of Split is a view and is being"):
            b.add_(1)
        assert (x._version, a._version, b._version) == versions
        np.testing.assert_array_equal(x.detach().numpy(), X0)
        assert type(b.grad_fn).__name__ == "SplitBackward0"
        a.sum().backward()   # the graph is intact


# --- in-place view methods ------------------------------------------------------------------------
INPLACE_VIEW_CASES = {
    "t_": lambda x: x[:, 0].t_(),
    "t_1d": lambda x: x[0, 0].t_(),
    "transpose_": lambda x: x.transpose_(0, 2),
    "transpose_of_view": lambda x: x[0].transpose_(0, 1),
    "swapdims_": lambda x: x.swapdims_(0, 1),
    "swapaxes_": lambda x: x.swapaxes_(0, 1),
    "squeeze_": lambda x: x.squeeze_(),
    "squeeze_dim": lambda x: x.squeeze_(1),
    "squeeze_dims": lambda x: x.squeeze_((1, 0)),
    "unsqueeze_": lambda x: x.unsqueeze_(0),
    "unsqueeze_of_view": lambda x: x.view(6).unsqueeze_(1),
    "as_strided_": lambda x: x.as_strided_((3, 2), (1, 3)),
    "as_strided_of_view": lambda x: x[1].as_strided_((3,), (1,), 1),
    "twice": lambda x: x.t_() if x.squeeze_(1) is x else None,
}


def _inplace_view(m, fn, cotangent_seed=0):
    leaf = m.tensor(np.arange(6.0).reshape(2, 1, 3) + 1, requires_grad=True)
    x = leaf.clone()
    out = fn(x)
    node = out.grad_fn
    edges = [type(f).__name__ for f, _ in node.next_functions if f is not None]
    cot = np.random.default_rng(cotangent_seed).standard_normal(tuple(out.shape))
    (grad,) = m.autograd.grad(out, leaf, m.tensor(cot))
    return (type(node).__name__, edges, tuple(out.shape), tuple(out.stride()), out._version,
            out is x), grad.numpy()


@pytest.mark.parametrize("case", INPLACE_VIEW_CASES)
def test_inplace_view_methods_record_torch_nodes(case):
    fn = INPLACE_VIEW_CASES[case]
    (s_meta, s_grad), (t_meta, t_grad) = _inplace_view(strata, fn), _inplace_view(torch, fn)
    assert s_meta == t_meta
    np.testing.assert_allclose(s_grad, t_grad, rtol=1e-12)


@pytest.mark.parametrize("call,error", [
    (lambda x: x.t_(), RuntimeError), (lambda x: x.transpose_(0, 5), IndexError),
    (lambda x: x.unsqueeze_(9), IndexError), (lambda x: x.squeeze_(4), IndexError),
])
def test_failed_inplace_view_leaves_tensor_untouched(call, error):
    for m in (strata, torch):
        x = m.tensor(np.ones((2, 1, 3)), requires_grad=True).clone()
        node = x.grad_fn
        with pytest.raises(error):
            call(x)
        assert (tuple(x.shape), x._version, x.grad_fn) == ((2, 1, 3), 0, node)


# --- reductions given dim=None --------------------------------------------------------------------
REDUCTION_CASES = {
    "sum": lambda m, x: x.sum(),
    "sum_dim_none": lambda m, x: x.sum(dim=None),
    "sum_none_keepdim": lambda m, x: x.sum(None, True),
    "sum_none_dtype": lambda m, x: m.sum(x, dim=None, dtype=m.float32),
    "sum_dtype": lambda m, x: x.sum(dtype=m.float32),
    "sum_empty_list": lambda m, x: x.sum(dim=[]),
    "mean": lambda m, x: x.mean(),
    "mean_dim_none": lambda m, x: m.mean(x, dim=None),
    "mean_none_keepdim": lambda m, x: x.mean(None, keepdim=True),
    "nansum_dim_none": lambda m, x: x.nansum(dim=None),
    "std_dim_none": lambda m, x: x.std(dim=None),
    "amax_empty": lambda m, x: x.amax(dim=()),
}


@pytest.mark.parametrize("case", REDUCTION_CASES)
def test_reduction_dim_none_node_names(case):
    fn = REDUCTION_CASES[case]
    results = []
    for m in (strata, torch):
        leaf = m.tensor(np.arange(6.0).reshape(2, 1, 3), requires_grad=True)
        out = fn(m, leaf.clone())
        (grad,) = m.autograd.grad(out.sum(), leaf)
        results.append((type(out.grad_fn).__name__, tuple(out.shape), grad.numpy()))
    (s_name, s_shape, s_grad), (t_name, t_shape, t_grad) = results
    assert (s_name, s_shape) == (t_name, t_shape)
    np.testing.assert_allclose(s_grad, t_grad)


# --- derivative rows beyond PyTorch's -----------------------------------------------------------
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_binary_cross_entropy_backward_weight_gradient(reduction):
    """ATen refuses a weight that requires grad here; strata's row differentiates it too, and
    every input's gradient passes a central-difference check."""
    rng = np.random.default_rng(reduction)
    x = strata.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=True)
    y = strata.tensor(rng.uniform(0, 1, (3, 4)), requires_grad=True)
    w = strata.tensor(rng.uniform(0.5, 1.5, (4,)), requires_grad=True)
    go = strata.tensor(rng.standard_normal(() if reduction else (3, 4)), requires_grad=True)

    def fn(go, x, y, w):
        return strata.ops.aten.binary_cross_entropy_backward.default(go, x, y, w, reduction)
    assert type(fn(go, x, y, w).grad_fn).__name__ == "BinaryCrossEntropyBackwardBackward0"
    assert strata.autograd.gradcheck(fn, (go, x, y, w))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_with_logits_weight_gradients(reduction):
    """ATen refuses a weight or pos_weight that requires grad; strata's row differentiates
    every input (central differences), and the input's gradient is PyTorch's."""
    rng = np.random.default_rng(3)
    x0, y0 = rng.standard_normal((3, 4)), rng.uniform(0, 1, (3, 4))
    w0, pw0 = rng.uniform(0.5, 1.5, (4,)), rng.uniform(0.5, 3, (4,))
    leaves = [strata.tensor(a, requires_grad=True) for a in (x0, y0, w0, pw0)]

    def fn(x, y, w, pw):
        return strata.nn.functional.binary_cross_entropy_with_logits(
            x, y, w, reduction=reduction, pos_weight=pw)
    out = fn(*leaves)
    assert type(out.grad_fn).__name__ == "BinaryCrossEntropyWithLogitsBackward0"
    assert strata.autograd.gradcheck(fn, tuple(leaves))
    x = torch.tensor(x0, requires_grad=True)
    expected = torch.autograd.grad(torch.nn.functional.binary_cross_entropy_with_logits(
        x, torch.tensor(y0), torch.tensor(w0), reduction=reduction,
        pos_weight=torch.tensor(pw0)).sum(), x)[0]
    got = strata.autograd.grad(out.sum(), leaves[0])[0]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_embedding_renorm_records_a_node_whose_backward_refuses():
    """As PyTorch: EmbeddingRenormBackward0 over the weight's history, and backward raises
    (before, the gradient passed through the rescaled rows as if they were unchanged)."""
    w0 = np.arange(15.0).reshape(5, 3)
    for m in (strata, torch):
        w = m.tensor(w0, requires_grad=True).clone()
        m.embedding_renorm_(w, m.tensor([0, 2]), 1.0, 2.0)
        assert type(w.grad_fn).__name__ == "EmbeddingRenormBackward0"
        assert [type(f).__name__ for f, _ in w.grad_fn.next_functions if f] == ["CloneBackward0"]
        with pytest.raises(NotImplementedError,
                           match="the derivative for 'embedding_renorm' is not implemented."):
            w.sum().backward()


@pytest.mark.parametrize("call", [
    lambda m, x: m.unique(x, return_inverse=True, return_counts=True)[0],
    lambda m, x: m.unique_consecutive(x, return_counts=True)[0],
    lambda m, x: m.unique(x.view(2, 2), dim=0),
    lambda m, x: m.geqrf(x.view(2, 2))[1],
])
def test_not_implemented_rows_refuse_as_torch(call):
    """derivatives.yaml's not_implemented rows: PyTorch's node name, and backward raises
    PyTorch's NotImplementedError."""
    results = []
    for m in (strata, torch):
        x = m.tensor([3.0, 1.0, 3.0, 2.0], dtype=m.float64, requires_grad=True).clone()
        out = call(m, x)
        with pytest.raises(NotImplementedError) as info:
            out.sum().backward()
        results.append((type(out.grad_fn).__name__, str(info.value)))
    assert results[0] == results[1]
