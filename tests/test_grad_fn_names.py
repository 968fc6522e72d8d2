"""Autograd node names as PyTorch's, swept over the op db.

Users read node names in ``out.grad_fn`` and in ``strata.explain``; they should be the class
names PyTorch 2.13 records. Every op-db sample (``tests/op_samples``) with a floating input runs
as in ``tests/test_gradients.py`` (float64 leaves that require grad, cloned), and for each output
that requires grad the test compares ``type(out.grad_fn).__name__`` and the names one edge down
(``next_functions``, empty edges left out: strata keeps an edge slot per tensor argument where
PyTorch drops the non-differentiable ones).

Ops whose names differ on purpose, or by more than a name fix, are listed in ``ALLOWED`` with the
reason; any other mismatch fails, and so does an allowed op that has come to match (so the list
only shrinks).
"""

import warnings

import numpy as np
import pytest
import torch
from helpers import flatten_outputs, is_float_array
from op_samples import all_samples

import strata

# Reasons, one per kind of deliberate difference.
DECOMPOSED = ("strata decomposes the op into primitives (DESIGN.md: a small primitive set), so "
              "the node is its last primitive's; ATen has a derivative row of its own")
DECOMPOSED_OTHERWISE = ("composite in both, but strata's decomposition ends in other primitives "
                        "than ATen's (a different but equal-gradient formula)")
INPLACE_BY_COPY = ("an in-place composite: strata computes out of place and writes back with "
                   "copy_ (CopyBackwards); ATen has an in-place derivative row")
STRATA_HAS_FORMULA = ("PyTorch records a NotImplemented node (backward raises); strata "
                      "differentiates the op")
NO_FORMULA_YET = ("strata has no derivative yet: it records a NotImplemented node whose backward "
                  "raises naming the op")
FUSED_RNN = ("strata records one fused node for the whole RNN layer/cell; PyTorch's CPU path "
             "is a composite of pointwise ops")

VIEW_SCATTER = ("a composite in strata: a clone with src copied into its view (CopySlices); "
                "ATen's op has its own row")

ALLOWED = {
    "aten::_gru_layer": FUSED_RNN,
    "aten::_gru_layer_backward": NO_FORMULA_YET,
    "aten::_lstm_layer": FUSED_RNN,
    "aten::_lstm_layer_backward": NO_FORMULA_YET,
    "aten::_pad_circular": "strata builds the padded tensor with cat; ATen writes slices "
                           "into a new tensor (CopySlices)",
    "aten::_thnn_fused_gru_cell": FUSED_RNN,
    "aten::_thnn_fused_gru_cell_backward": NO_FORMULA_YET,
    "aten::_thnn_fused_lstm_cell": FUSED_RNN,
    "aten::_thnn_fused_lstm_cell_backward_impl": NO_FORMULA_YET,
    "aten::adaptive_avg_pool2d": "a primitive in strata (own node); ATen's CPU path for an "
                                 "output of 1x1 is mean (MeanBackward1)",
    "aten::bilinear": DECOMPOSED_OTHERWISE,
    "aten::cholesky_solve": "a composite of two triangular solves in strata (one "
                            "LinalgSolveTriangularBackward0 each); ATen's op has its own row",
    "aten::coalesce": NO_FORMULA_YET,
    "aten::sparse_mask": NO_FORMULA_YET,
    "aten::conj_physical": "ATen returns a real input itself (the node seen is the input's); "
                           "strata records ConjPhysicalBackward0",
    "aten::cross": "ATen's cross calls linalg_cross (LinalgCrossBackward0); strata's computes "
                   "directly, a dispatch cheaper",
    "aten::cross_entropy_loss": DECOMPOSED_OTHERWISE,
    "aten::ctc_loss.IntList": DECOMPOSED,
    "aten::cumulative_trapezoid.x": DECOMPOSED_OTHERWISE,
    "aten::div.Tensor_mode": STRATA_HAS_FORMULA,
    "aten::deg2rad": DECOMPOSED,
    "aten::deg2rad_": DECOMPOSED,
    "aten::dist": DECOMPOSED,
    "aten::einsum": DECOMPOSED_OTHERWISE,
    "aten::fft_ifft": "PyTorch's conj is a lazy view (ConjBackward0); strata conjugates "
                      "eagerly (ConjPhysicalBackward0)",
    "aten::fft_ihfft": "PyTorch's conj is a lazy view (ConjBackward0); strata conjugates "
                       "eagerly (ConjPhysicalBackward0)",
    "aten::flatten.using_ints": DECOMPOSED_OTHERWISE,
    "aten::floor_divide": STRATA_HAS_FORMULA,
    "aten::floor_divide_.Tensor": STRATA_HAS_FORMULA,
    "aten::grid_sampler_2d": DECOMPOSED,
    "aten::grid_sampler_3d": DECOMPOSED,
    "aten::group_norm": DECOMPOSED,
    "aten::hardsigmoid_backward": STRATA_HAS_FORMULA,
    "aten::kron": DECOMPOSED_OTHERWISE,
    "aten::linalg_householder_product": DECOMPOSED,
    "aten::linalg_multi_dot": "ATen ends in a view to the output shape; strata squeezes a "
                              "vector operand's dim only, a dispatch cheaper",
    "aten::linalg_svd": "U/S/Vh share LinalgSvdBackward0 as in PyTorch; the reduced Vh is a "
                        "view (ViewBackward0) where ATen's is an _unsafe_view",
    "aten::linear": DECOMPOSED_OTHERWISE,
    "aten::matmul": DECOMPOSED_OTHERWISE,
    "aten::mish_backward": STRATA_HAS_FORMULA,
    "aten::multi_margin_loss": DECOMPOSED,
    "aten::nanquantile": DECOMPOSED_OTHERWISE,
    "aten::nanquantile.scalar": DECOMPOSED_OTHERWISE,
    "aten::nll_loss_nd": "strata flattens N-d input to nll_loss; ATen calls nll_loss2d for 4-D",
    "aten::orgqr": DECOMPOSED,
    "aten::pad": "strata pads with cat; ATen writes slices into a new tensor (CopySlices)",
    "aten::pairwise_distance": DECOMPOSED_OTHERWISE,
    "aten::cdist": ("strata records one CdistBackward0 for every form (its p = 2 gradient is two "
                    "products); ATen's matrix-product form is a composite whose last node is a "
                    "view (ViewBackward0)"),
    "aten::slice_scatter": VIEW_SCATTER,
    "aten::select_scatter": VIEW_SCATTER,
    "aten::diagonal_scatter": VIEW_SCATTER,
    "aten::pdist": "a composite of the rows' differences and vector_norm in strata (its "
                   "gradients are _pdist_backward's); ATen's _pdist_forward has PdistBackward0",
    "aten::quantile": DECOMPOSED_OTHERWISE,
    "aten::rad2deg": DECOMPOSED,
    "aten::rad2deg_": DECOMPOSED,
    "aten::quantile.scalar": DECOMPOSED_OTHERWISE,
    "aten::remainder.Tensor": STRATA_HAS_FORMULA,
    "aten::repeat_interleave.self_int": "ATen clones then views (ViewBackward0); strata's "
                                        "copying reshape is one op, a dispatch cheaper",
    "aten::reshape": "strata's reshape is a view or a copy (ReshapeCopyBackward0); ATen's "
                     "copying path is _unsafe_view / _reshape_alias",
    "aten::rrelu": DECOMPOSED,
    "aten::rrelu_": DECOMPOSED,
    "aten::scaled_dot_product_attention": DECOMPOSED_OTHERWISE,
    "aten::scatter.reduce": STRATA_HAS_FORMULA,
    "aten::scatter.value_reduce": STRATA_HAS_FORMULA,
    "aten::scatter_.reduce": STRATA_HAS_FORMULA,
    "aten::scatter_.value_reduce": STRATA_HAS_FORMULA,
    "aten::silu_backward": STRATA_HAS_FORMULA,
    "aten::stft.center": DECOMPOSED_OTHERWISE,
    "aten::sub.Tensor": "a Python-number minuend (2 - x) is ATen's rsub.Scalar "
                        "(RsubBackward1); strata's Tensor.__rsub__ calls sub",
    "aten::to_dense": NO_FORMULA_YET,
    "aten::to_sparse.sparse_dim": NO_FORMULA_YET,
    "aten::trapezoid.dx": DECOMPOSED_OTHERWISE,
    "aten::trapezoid.x": DECOMPOSED_OTHERWISE,
    "aten::trapz.dx": DECOMPOSED_OTHERWISE,
    "aten::trapz.x": DECOMPOSED_OTHERWISE,
    "aten::vander": DECOMPOSED_OTHERWISE,
}

# The outputs' own nodes match; a node one edge down differs (the op's inner composite).
ALLOWED_ONE_LEVEL_DOWN = {
    "aten::_standard_gamma_grad": "strata's node keeps an edge to each input; ATen's has one",
    "aten::cartesian_prod": DECOMPOSED_OTHERWISE,
    "aten::combinations": DECOMPOSED_OTHERWISE,
    "aten::ger": "ATen reshapes self (ViewBackward0); strata's unsqueeze is cheaper",
    "aten::outer": "ATen reshapes self (ViewBackward0); strata's unsqueeze is cheaper",
    "aten::cumulative_trapezoid.dx": DECOMPOSED_OTHERWISE,
    "aten::fft_hfft": "PyTorch's conj is a lazy view (ConjBackward0); strata conjugates "
                      "eagerly (ConjPhysicalBackward0)",
    "aten::margin_ranking_loss": "ATen adds the margin with add.Scalar (AddBackward1), an "
                                 "overload Python calls never reach; strata's add is row 0",
}


def _node_names(m, sample):
    """[(name of out.grad_fn, names one edge down)] for each output of ``sample`` needing grad."""
    args = [m.tensor(x.astype(np.float64), requires_grad=True).clone() if is_float_array(x)
            else m.tensor(x) if isinstance(x, np.ndarray) else x for x in sample.inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = [o for o in flatten_outputs(sample.fn(m, *args))
                if isinstance(o, m.Tensor) and o.requires_grad]
    names = []
    for out in outs:
        node = out.grad_fn
        below = tuple(type(f).__name__ for f, _ in node.next_functions if f is not None)
        names.append((type(node).__name__, below))
    return names


def _torch_node_names(sample):
    """PyTorch's names, or None for an error sample (its wording is test_op_db.py's concern)."""
    try:
        return _node_names(torch, sample)
    except (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError):
        return None


OP_DB = {q: [s for s in ss if any(is_float_array(x) for x in s.inputs) and not s.random]
         for q, ss in all_samples().items()}


def _mismatches(qualname):
    """Lines naming each sample whose nodes differ from PyTorch's: (the outputs' own nodes,
    the nodes one edge down where the outputs' agree)."""
    top, below = [], []
    for i, sample in enumerate(OP_DB[qualname]):
        expected = _torch_node_names(sample)
        if expected is None:
            continue
        got = _node_names(strata, sample)
        label = sample.name or i
        if [n for n, _ in got] != [n for n, _ in expected]:
            top.append(f"{label}: grad_fn {[n for n, _ in got]}, "
                       f"PyTorch {[n for n, _ in expected]}")
        elif [b for _, b in got] != [b for _, b in expected]:
            below.append(f"{label}: next_functions {[b for _, b in got]}, "
                         f"PyTorch {[b for _, b in expected]}")
    return top, below


@pytest.mark.parametrize("qualname", sorted(q for q, ss in OP_DB.items() if ss))
def test_grad_fn_names_match_torch(qualname):
    top, below = _mismatches(qualname)
    if qualname in ALLOWED:
        assert top or below, f"{qualname} now records PyTorch's nodes: remove it from ALLOWED"
        return
    assert not top, f"{qualname}: node names differ from PyTorch's:\n" + "\n".join(top)
    if qualname in ALLOWED_ONE_LEVEL_DOWN:
        assert below, f"{qualname} now matches PyTorch: remove it from ALLOWED_ONE_LEVEL_DOWN"
    else:
        assert not below, f"{qualname}: nodes one edge down differ:\n" + "\n".join(below)


def test_allow_lists_name_op_db_ops():
    """A typo or a removed op in the allow-lists would hide nothing and be kept forever."""
    unknown = sorted((ALLOWED.keys() | ALLOWED_ONE_LEVEL_DOWN.keys()) - OP_DB.keys())
    assert not unknown, f"allow-list entries with no op-db samples: {unknown}"


def test_fixed_names_on_hand_written_graphs():
    """The names fixed here, on calls a user writes, with PyTorch's gradients."""
    rng = np.random.default_rng(0)
    x0, w0, cot = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(4)
    grads = []
    for m in (strata, torch):
        x, w = m.tensor(x0, requires_grad=True), m.tensor(w0, requires_grad=True)
        y = m.nn.functional.linear(x, w)
        assert [type(f).__name__ for f, _ in y.grad_fn.next_functions if f] == \
            ["AccumulateGrad", "TBackward0"], m.__name__
        assert type(x.t().grad_fn).__name__ == "TBackward0"
        assert type(x.sort(1)[0].grad_fn).__name__ == "SortBackward0"
        assert type(x.sum(dim=[]).grad_fn).__name__ == "SumBackward1"
        assert type(x.clone().asinh_().grad_fn).__name__ == "AsinhBackward1"
        z = (y.sum(0) @ w).t() * m.tensor(cot)
        grads.append(m.autograd.grad(z.sum(), (x, w)))
    for s, t in zip(*grads):
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-12)
