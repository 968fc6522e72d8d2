"""Gradients of primitive ops: against PyTorch (float64) and against finite differences.

Every floating NumPy input of a sample becomes a float64 leaf that requires grad; the sample runs
on a clone of it (so in-place samples can write), a random cotangent is backpropagated, and the
leaves' gradients must match PyTorch's. Samples come from ``GRAD_SAMPLES`` below (one list per
op with a formula, so every formula is covered) and from ``tests/op_samples`` (for every op, so
decompositions are checked too). Small samples of ops with a formula also go through strata's own
``gradcheck`` (central differences).
"""

import numpy as np
import pytest
import torch
from helpers import flatten_outputs, is_float_array
from op_samples import Sample, all_samples

import strata
from strata.autograd import derivatives as DV
from strata.ops.op import REGISTRY

_rng = np.random.default_rng(7)


def r(*shape):
    return _rng.standard_normal(shape)


def pos(*shape):
    return _rng.uniform(0.5, 2.0, shape)


def unit(*shape):
    return _rng.uniform(-0.9, 0.9, shape)


def big(*shape):
    return _rng.uniform(1.2, 3.0, shape)


def apart(*shape):
    """Distinct values spaced well apart (no ties for max/min/sort-like ops)."""
    n = int(np.prod(shape)) if shape else 1
    return (_rng.permutation(n) * 0.37 + 0.1).reshape(shape)


S = Sample
F = np.float64

GRAD_SAMPLES = {
    # --- pointwise: unary ----------------------------------------------------------------------
    "aten::exp": [S(lambda m, x: m.exp(x), (r(3, 4),)), S(lambda m, x: x.exp(), (r(),)),
                  S(lambda m, x: x.exp_(), (r(4),), name="inplace")],
    "aten::exp2": [S(lambda m, x: m.exp2(x), (r(5),))],
    "aten::expm1": [S(lambda m, x: m.expm1(x), (r(2, 3),))],
    "aten::log": [S(lambda m, x: m.log(x), (pos(3, 4),)), S(lambda m, x: x.log_(), (pos(3),))],
    "aten::log2": [S(lambda m, x: m.log2(x), (pos(4),))],
    "aten::log10": [S(lambda m, x: m.log10(x), (pos(4),))],
    "aten::log1p": [S(lambda m, x: m.log1p(x), (pos(4),))],
    "aten::sqrt": [S(lambda m, x: m.sqrt(x), (pos(2, 3),)), S(lambda m, x: x.sqrt_(), (pos(3),))],
    "aten::rsqrt": [S(lambda m, x: m.rsqrt(x), (pos(4),))],
    "aten::sin": [S(lambda m, x: m.sin(x), (r(3, 2),)), S(lambda m, x: x.sin_(), (r(3),))],
    "aten::cos": [S(lambda m, x: m.cos(x), (r(3, 2),))],
    "aten::tan": [S(lambda m, x: m.tan(x), (unit(4),))],
    "aten::asin": [S(lambda m, x: m.asin(x), (unit(4),))],
    "aten::acos": [S(lambda m, x: m.acos(x), (unit(4),))],
    "aten::atan": [S(lambda m, x: m.atan(x), (r(4),))],
    "aten::sinh": [S(lambda m, x: m.sinh(x), (r(4),))],
    "aten::cosh": [S(lambda m, x: m.cosh(x), (r(4),))],
    "aten::tanh": [S(lambda m, x: m.tanh(x), (r(2, 3),)), S(lambda m, x: x.tanh_(), (r(3),))],
    "aten::asinh": [S(lambda m, x: m.asinh(x), (r(4),))],
    "aten::acosh": [S(lambda m, x: m.acosh(x), (big(4),))],
    "aten::atanh": [S(lambda m, x: m.atanh(x), (unit(4),))],
    "aten::sigmoid": [S(lambda m, x: m.sigmoid(x), (r(3, 4),)),
                      S(lambda m, x: x.sigmoid_(), (r(3),))],
    "aten::erf": [S(lambda m, x: m.erf(x), (r(4),))],
    "aten::erfc": [S(lambda m, x: m.erfc(x), (r(4),))],
    "aten::erfinv": [S(lambda m, x: m.erfinv(x), (unit(4),))],
    "aten::reciprocal": [S(lambda m, x: m.reciprocal(x), (pos(4),))],
    "aten::abs": [S(lambda m, x: m.abs(x), (r(3, 4),)), S(lambda m, x: x.abs_(), (r(3),))],
    "aten::neg": [S(lambda m, x: -x, (r(3, 4),)), S(lambda m, x: x.neg_(), (r(3),))],
    "aten::sign": [S(lambda m, x: m.sign(x), (r(4),))],
    "aten::floor": [S(lambda m, x: m.floor(x), (r(4),))],
    "aten::ceil": [S(lambda m, x: m.ceil(x), (r(4),))],
    "aten::trunc": [S(lambda m, x: m.trunc(x), (r(4),))],
    "aten::round": [S(lambda m, x: m.round(x), (r(4),)),
                    S(lambda m, x: m.round(x, decimals=1), (r(4),), name="decimals")],
    "aten::frac": [S(lambda m, x: m.frac(x), (r(4),))],
    "aten::relu": [S(lambda m, x: m.relu(x), (r(3, 4),)), S(lambda m, x: x.relu_(), (r(5),))],
    "aten::gelu": [S(lambda m, x: m.nn.functional.gelu(x), (r(3, 4),)),
                   S(lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), (r(5),),
                     name="tanh")],
    # --- pointwise: binary ---------------------------------------------------------------------
    "aten::add.Tensor": [
        S(lambda m, x, y: x + y, (r(3, 4), r(3, 4))),
        S(lambda m, x, y: m.add(x, y, alpha=2.5), (r(3, 4), r(4)), name="broadcast_alpha"),
        S(lambda m, x, y: x + y, (r(2, 1, 3), r(4, 1)), name="broadcast_both"),
        S(lambda m, x: x + 2, (r(3),), name="scalar"),
        S(lambda m, x, y: x + y, (r(), r(3)), name="0d"),
        S(lambda m, x, y: x + y, (r(0, 3), r(3)), name="empty"),
        S(lambda m, x, y: x.add_(y, alpha=-1), (r(3, 4), r(4)), name="inplace"),
        S(lambda m, x, y: x.float() + y, (r(3), r(3)), name="mixed_dtype"),
    ],
    "aten::sub.Tensor": [S(lambda m, x, y: m.sub(x, y, alpha=3), (r(3, 4), r(1, 4))),
                         S(lambda m, x: 1 - x, (r(3),), name="rsub_scalar"),
                         S(lambda m, x, y: x.sub_(y), (r(3), r(3)), name="inplace")],
    "aten::mul.Tensor": [S(lambda m, x, y: x * y, (r(3, 4), r(4))),
                         S(lambda m, x: x * 2.5, (r(3),), name="scalar"),
                         S(lambda m, x: x * x, (r(3),), name="same"),
                         S(lambda m, x, y: x.mul_(y), (r(2, 3), r(3)), name="inplace")],
    "aten::div.Tensor": [S(lambda m, x, y: x / y, (r(3, 4), pos(4))),
                         S(lambda m, x: 2 / x, (pos(3),), name="rdiv"),
                         S(lambda m, x, y: x.div_(y), (r(3), pos(3)), name="inplace")],
    "aten::div.Tensor_mode": [
        S(lambda m, x, y: m.div(x, y, rounding_mode="floor"), (r(4), pos(4))),
        S(lambda m, x, y: m.div(x, y, rounding_mode="trunc"), (r(4), pos(4)), name="trunc"),
        S(lambda m, x, y: m.ops.aten.div.Tensor_mode(x, y, rounding_mode=None), (r(4), pos(4)),
          name="none")],
    "aten::remainder.Tensor": [S(lambda m, x, y: m.remainder(x, y), (r(4) * 3, pos(4))),
                               S(lambda m, x: x % 0.7, (r(4),), name="scalar")],
    "aten::fmod.Tensor": [S(lambda m, x, y: m.fmod(x, y), (r(4) * 3, pos(4)))],
    "aten::pow.Tensor_Tensor": [
        S(lambda m, x, y: x ** y, (pos(3, 4), r(4))),
        S(lambda m, x: x ** 3, (r(4),), name="scalar_exp"),
        S(lambda m, x: x ** 0, (r(4),), name="zero_exp"),
        S(lambda m, x: 2.0 ** x, (r(4),), name="scalar_base"),
        S(lambda m, x, y: x.pow_(y), (pos(3), r(3)), name="inplace")],
    "aten::atan2": [S(lambda m, x, y: m.atan2(x, y), (r(3, 4), r(4)))],
    "aten::maximum": [S(lambda m, x, y: m.maximum(x, y), (r(3, 4), r(4))),
                      S(lambda m, x: m.maximum(x, x), (r(3),), name="ties")],
    "aten::minimum": [S(lambda m, x, y: m.minimum(x, y), (r(3, 4), r(4)))],
    "aten::fmax": [S(lambda m, x, y: m.fmax(x, y), (r(4), np.array([np.nan, 1.0, -1, 0.5])))],
    "aten::fmin": [S(lambda m, x, y: m.fmin(x, y), (r(3, 4), r(4)))],
    "aten::hypot": [S(lambda m, x, y: m.hypot(x, y), (r(3, 4), r(4)))],
    "aten::copysign.Tensor": [S(lambda m, x, y: m.copysign(x, y), (r(3, 4), r(4)))],
    "aten::where.self": [
        S(lambda m, c, x, y: m.where(c, x, y), (r(3, 4) > 0, r(3, 4), r(4))),
        S(lambda m, c, x: m.where(c, x, 0.0), (r(4) > 0, r(4)), name="scalar")],
    "aten::clamp.Tensor": [
        S(lambda m, x, lo, hi: m.clamp(x, lo, hi), (r(3, 4), r(4) - 1, r(4) + 1)),
        S(lambda m, x: m.clamp(x, -0.5, 0.5), (r(3, 4),), name="scalars"),
        S(lambda m, x, lo: m.clamp(x, min=lo), (r(3, 4), r(4)), name="min_only"),
        S(lambda m, x, hi: m.clamp(x, max=hi), (r(3, 4), r(4)), name="max_only"),
        S(lambda m, x: x.clamp_(min=0), (r(5),), name="inplace")],
    "aten::nan_to_num": [S(lambda m, x: m.nan_to_num(x),
                           (np.array([1.0, np.nan, np.inf, -np.inf, 2.0]),))],
    # --- factory -------------------------------------------------------------------------------
    "aten::_to_copy": [S(lambda m, x: x.to(m.float32) * 2, (r(3),)),
                       S(lambda m, x: x.to(m.float16).to(m.float64), (r(3),), name="round_trip",
                         extra={"no_fd": True})],
    "aten::clone": [S(lambda m, x: x.clone() * 3, (r(3, 4),))],
    "aten::copy_": [S(lambda m, x, y: x.copy_(y), (r(3, 4), r(4))),
                    S(lambda m, x, y: x.copy_(y.float()), (r(3), r(3)), name="cast")],
    "aten::fill_.Scalar": [S(lambda m, x: x.fill_(2.0) * x, (r(3),))],
    "aten::normal_": [S(lambda m, x: x.normal_() * 0, (r(3),))],
    "aten::uniform_": [S(lambda m, x: x.uniform_() * 0, (r(3),))],
    "aten::bernoulli": [S(lambda m, x: m.bernoulli(x.sigmoid()) * 0, (r(3),))],
    # the random fills (ops/random_fills.py): self is overwritten, probabilities get zeros
    "aten::random_.from": [S(lambda m, x: x.random_(0, 5) * 0, (r(3),))],
    "aten::random_.to": [S(lambda m, x: x.random_(5) * 0, (r(3),))],
    "aten::random_": [S(lambda m, x: x.random_() * 0, (r(3),))],
    "aten::bernoulli_.float": [S(lambda m, x: x.bernoulli_(0.5) * 0, (r(3),))],
    "aten::bernoulli_.Tensor": [S(lambda m, x, p: x.bernoulli_(p.sigmoid()) * 0, (r(3), r(3)))],
    "aten::exponential_": [S(lambda m, x: x.exponential_() * 0, (r(3),))],
    "aten::geometric_": [S(lambda m, x: x.geometric_(0.5) * 0, (r(3),))],
    "aten::cauchy_": [S(lambda m, x: x.cauchy_() * 0, (r(3),))],
    "aten::log_normal_": [S(lambda m, x: x.log_normal_() * 0, (r(3),))],
    # --- shape: views --------------------------------------------------------------------------
    "aten::view": [S(lambda m, x: x.view(4, 3), (r(3, 4),)),
                   S(lambda m, x: x.t().reshape(12), (r(3, 4),), name="reshape_copy")],
    "aten::as_strided": [
        S(lambda m, x: x.as_strided((2, 2), (1, 2), 1), (r(3, 4),)),
        S(lambda m, x: x.as_strided((2, 3), (0, 1)), (r(6),), name="expanded")],
    "aten::permute": [S(lambda m, x: x.permute(2, 0, 1), (r(2, 3, 4),)),
                      S(lambda m, x: x.permute(-1, 0), (r(3, 4),), name="neg")],
    "aten::transpose.int": [S(lambda m, x: x.transpose(0, -1), (r(2, 3, 4),))],
    "aten::expand": [S(lambda m, x: x.expand(2, 3, 4), (r(3, 1),)),
                     S(lambda m, x: x.expand(5), (r(),), name="0d")],
    "aten::squeeze.dims": [S(lambda m, x: x.squeeze(), (r(3, 1, 4, 1),)),
                           S(lambda m, x: x.squeeze(1), (r(3, 1, 4),), name="dim"),
                           S(lambda m, x: x.squeeze((1, 3)), (r(3, 1, 4, 1),), name="dims")],
    "aten::unsqueeze": [S(lambda m, x: x.unsqueeze(-1), (r(3, 4),))],
    "aten::slice.Tensor": [S(lambda m, x: x[1:3], (r(4, 3),)),
                           S(lambda m, x: x[:, ::2], (r(3, 5),), name="step"),
                           S(lambda m, x: x[..., -2:], (r(2, 3),), name="neg")],
    "aten::select.int": [S(lambda m, x: x[1], (r(3, 4),)),
                         S(lambda m, x: x[:, -1], (r(3, 4),), name="neg")],
    "aten::diagonal": [S(lambda m, x: x.diagonal(), (r(3, 4),)),
                       S(lambda m, x: x.diagonal(1, 0, 2), (r(3, 2, 4),), name="offset")],
    "aten::unfold": [S(lambda m, x: x.unfold(0, 2, 1), (r(5),)),
                     S(lambda m, x: x.unfold(1, 2, 3), (r(2, 7),), name="gaps")],
    "aten::alias": [S(lambda m, x: m.ops.aten.alias(x) * 2, (r(3),))],
    # --- shape: copies -------------------------------------------------------------------------
    "aten::cat": [S(lambda m, x, y: m.cat([x, y], 1), (r(2, 3), r(2, 2))),
                  S(lambda m, x, y: m.cat([x, y]), (r(2, 3), r(0)), name="legacy_empty"),
                  S(lambda m, x, y: m.cat((x, y), -1), (r(3), r(2)), name="neg")],
    "aten::flip": [S(lambda m, x: m.flip(x, (0, 1)), (r(2, 3),))],
    "aten::roll": [S(lambda m, x: m.roll(x, 1, 0), (r(3, 2),)),
                   S(lambda m, x: m.roll(x, (1, -2), (0, 1)), (r(3, 4),), name="dims")],
    "aten::repeat": [S(lambda m, x: x.repeat(2, 3), (r(2, 2),)),
                     S(lambda m, x: x.repeat(2, 1, 2), (r(3),), name="new_dims")],
    "aten::tril": [S(lambda m, x: m.tril(x), (r(3, 4),)),
                   S(lambda m, x: m.tril(x, -1), (r(3, 3),), name="neg")],
    "aten::triu": [S(lambda m, x: m.triu(x, 1), (r(3, 4),))],
    "aten::diag": [S(lambda m, x: m.diag(x), (r(3),)),
                   S(lambda m, x: m.diag(x, 1), (r(3, 4),), name="2d")],
    # --- reductions ----------------------------------------------------------------------------
    "aten::sum.dim_IntList": [S(lambda m, x: x.sum(), (r(3, 4),)),
                              S(lambda m, x: x.sum(1), (r(3, 4),), name="dim"),
                              S(lambda m, x: x.sum((0, 2), keepdim=True), (r(2, 3, 4),),
                                name="keepdim"),
                              S(lambda m, x: x.sum(-1, dtype=m.float32), (r(3, 4),),
                                name="dtype"),
                              S(lambda m, x: x.sum(), (r(0, 3),), name="empty")],
}

TOL = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5), "float16": (1e-2, 1e-2),
       "bfloat16": (5e-2, 5e-2)}


def _dtype_name(d):
    return str(d).split(".")[-1]


def _run(m, sample, cotangent_seed):
    """Run a sample with float64 leaves; returns (leaves, outputs needing grad, grads)."""
    leaves, args = [], []
    for x in sample.inputs:
        if is_float_array(x):
            leaf = m.tensor(x.astype(np.float64), requires_grad=True)
            leaves.append(leaf)
            args.append(leaf.clone())
        elif isinstance(x, np.ndarray):
            args.append(m.tensor(x))
        else:
            args.append(x)
    outs = [o for o in flatten_outputs(sample.fn(m, *args))
            if isinstance(o, m.Tensor) and o.requires_grad]
    rng = np.random.default_rng(cotangent_seed)
    cots = [m.tensor(rng.standard_normal(tuple(o.shape))).to(o.dtype) for o in outs]
    grads = m.autograd.grad(outs, leaves, cots, allow_unused=True) if outs else \
        (None,) * len(leaves)
    return leaves, outs, grads


def _compare(sample):
    try:
        _, t_outs, t_grads = _run(torch, sample, 0)
    except (RuntimeError, NotImplementedError) as e:
        pytest.skip(f"torch cannot differentiate this sample: {e}")
    try:
        _, s_outs, s_grads = _run(strata, sample, 0)
    except NotImplementedError as e:
        if "derivative for" not in str(e):
            raise
        pytest.xfail(str(e))   # listed by test_autograd.py's registry test
    assert len(s_outs) == len(t_outs), \
        f"{len(s_outs)} strata outputs require grad, torch has {len(t_outs)}"
    names = [_dtype_name(o.dtype) for o in t_outs] + ["float64"]
    rtol, atol = max(TOL.get(n, TOL["float64"]) for n in names)
    for i, (s, t) in enumerate(zip(s_grads, t_grads)):
        if t is None:
            assert s is None or not np.any(s.detach().numpy()), f"grad {i}: torch has None"
            continue
        if s is None:   # no path to the input: fine where torch's gradient is all zeros
            assert not np.any(t.detach().numpy()), f"grad {i}: strata has None, torch {t}"
            continue
        assert tuple(s.shape) == tuple(t.shape)
        assert _dtype_name(s.dtype) == _dtype_name(t.dtype)
        np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=rtol,
                                   atol=atol, equal_nan=True, err_msg=f"grad of input {i}")


def _cases(samples):
    return [pytest.param(q, s, id=f"{q.split('::')[1]}-{s.name or i}")
            for q, ss in samples.items() for i, s in enumerate(ss)]


OP_DB = all_samples()
FLOAT_OP_DB = {q: [s for s in ss if any(is_float_array(x) for x in s.inputs)
                   and not s.random] for q, ss in OP_DB.items()}


@pytest.mark.parametrize("qualname,sample", _cases(GRAD_SAMPLES))
def test_formula_matches_torch(qualname, sample):
    _compare(sample)


# Ops whose PyTorch gradient is wrong, with why; their gradients are checked against finite
# differences instead (the gradcheck cases below, and each op's own test file).
TORCH_GRADIENT_WRONG = {
    "aten::as_strided_scatter": "PyTorch gives self the view's region of the gradient, not "
                                "everything outside it: torch.autograd.gradcheck fails on "
                                "torch.as_strided_scatter itself (tests/test_as_strided_scatter.py)",
}


@pytest.mark.parametrize("qualname,sample", _cases(FLOAT_OP_DB))
def test_op_db_sample_gradients_match_torch(qualname, sample):
    if qualname in TORCH_GRADIENT_WRONG:
        pytest.skip(TORCH_GRADIENT_WRONG[qualname])
    _compare(sample)


def _gradcheck_cases():
    cases = []
    for q, ss in list(GRAD_SAMPLES.items()) + list(FLOAT_OP_DB.items()):
        op = REGISTRY.get(q)
        if op is None or not isinstance(DV.lookup(op), DV.Derivative):
            continue
        for i, s in enumerate(ss):
            arrays = [x for x in s.inputs if is_float_array(x)]
            if arrays and sum(x.size for x in arrays) <= 24 and \
                    all(np.isfinite(x).all() for x in arrays) and not s.extra.get("no_fd"):
                cases.append(pytest.param(q, s, id=f"{q.split('::')[1]}-{s.name or i}"))
    return cases


# samples on a kink of a piecewise function
NOT_SMOOTH_AT_SAMPLE = {"maximum-ties"}


@pytest.mark.parametrize("qualname,sample", _gradcheck_cases())
def test_formula_matches_finite_differences(qualname, sample, request):
    """strata's gradcheck passes wherever PyTorch's own passes on the same sample (where it does
    not, the sample sits on a kink, at a domain edge, or computes in reduced precision)."""
    if request.node.callspec.id in NOT_SMOOTH_AT_SAMPLE:
        pytest.skip("sample sits on a kink of a piecewise function")

    def setup(m):
        leaves = [m.tensor(x.astype(np.float64), requires_grad=True)
                  for x in sample.inputs if is_float_array(x)]

        def fn(*ls):
            it = iter(ls)
            args = [next(it).clone() if is_float_array(x) else
                    m.tensor(x) if isinstance(x, np.ndarray) else x for x in sample.inputs]
            return tuple(o for o in flatten_outputs(sample.fn(m, *args))
                         if isinstance(o, m.Tensor) and o.requires_grad)
        return fn, tuple(leaves)

    t_fn, t_leaves = setup(torch)
    try:
        torch_ok = bool(t_fn(*t_leaves)) and torch.autograd.gradcheck(
            t_fn, t_leaves, raise_exception=False)
    except (RuntimeError, NotImplementedError, ValueError) as e:
        pytest.skip(f"PyTorch's gradcheck cannot run this sample: {e}")
    if not torch_ok:
        pytest.skip("PyTorch's own gradcheck fails on this sample")
    s_fn, s_leaves = setup(strata)
    assert strata.autograd.gradcheck(s_fn, s_leaves)


def test_every_formula_has_grad_samples():
    """Each op with a formula is exercised by a sample here or in tests/op_samples."""
    missing = sorted(op.qualname for op in DV.DERIVATIVES
                     if op.qualname not in GRAD_SAMPLES and not FLOAT_OP_DB.get(op.qualname))
    assert not missing, f"ops with a derivative but no gradient sample: {missing}"


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_inplace_scatter_reduce_bumps_version_once(reduce):
    """The in-place composite computes on a clone of self when autograd records, so the self it
    saves survives the write; the written tensor still changes version once, as in PyTorch."""
    index = np.array([[0, 1, 0], [2, 0, 1]])
    x0, src0 = r(3, 3), r(2, 3)
    grads = []
    for m in (strata, torch):
        leaf, src = m.tensor(x0, requires_grad=True), m.tensor(src0, requires_grad=True)
        x = leaf.clone()
        before = x._version
        assert x.scatter_reduce_(0, m.tensor(index), src, reduce) is x
        assert x._version == before + 1
        grads.append(m.autograd.grad(x, (leaf, src), m.tensor(np.ones((3, 3)))))
    for s, t in zip(*grads):
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-12)
