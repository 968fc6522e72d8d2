"""Every op of the op db (tests/op_samples) on opencl: run with its inputs on the device (under
``with strata.device("opencl")``, so tensors a sample creates land there too), it gives the
CPU device's dtypes, shapes and values (within the op tests' tolerances), fails as the CPU
fails, or raises the dispatcher's NotImplementedError naming an aten op and the 'OpenCL'
backend, never a wrong answer and never another error. Random samples compare dtypes and
shapes (opencl draws Philox numbers, the CPU NumPy's).

The first run builds a few hundred OpenCL programs (PoCL: 0.1-1 s each); later runs load the
program binaries strata cached (docs/opencl.md).
"""

import os

import numpy as np
import pytest
from helpers import TOL, to_strata
from op_samples import all_samples

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

SAMPLES = all_samples()
# the dispatcher's "Could not run 'aten::x' with arguments from the 'OpenCL' backend", or a
# kernel's own for what it does not cover (complex dtypes, a 0-dim boolean mask)
NOT_ON_OPENCL = "'OpenCL' backend"
# float32 reductions run in another order (work-group trees, direct convolution sums)
DEVICE_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)}


def _to_opencl(x):
    t = to_strata(x)
    if isinstance(t, strata.Tensor):
        return t.to("opencl")
    if isinstance(t, (list, tuple)) and t and all(isinstance(a, strata.Tensor) for a in t):
        return type(t)(a.to("opencl") for a in t)
    return t


def _run(sample, on_opencl):
    try:
        if not on_opencl:
            return sample.fn(strata, *(to_strata(x) for x in sample.inputs))
        with strata.device("opencl"):
            return sample.fn(strata, *(_to_opencl(x) for x in sample.inputs))
    except Exception as e:  # noqa: BLE001  (compared below)
        return e


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [value]


def _values(t):
    t = t.detach().cpu()
    return t.float().numpy() if t.dtype is strata.bfloat16 else t.numpy()


def _same_value(a, b) -> bool:
    """Equal non-tensor results: numbers within rounding (NaN equal to NaN), anything else
    equal."""
    if a == b:
        return True
    try:
        return bool(np.isclose(a, b, equal_nan=True))
    except TypeError:
        return False


def _not_implemented(error) -> bool:
    return isinstance(error, NotImplementedError) and NOT_ON_OPENCL in str(error)


def check_sample(sample, where) -> str:
    """'ran' or 'not implemented' (asserting everything else)."""
    cpu, device = _run(sample, False), _run(sample, True)
    if _not_implemented(device):
        assert "aten::" in str(device), f"{where}: names no op: {device}"
        return "not implemented"
    if isinstance(cpu, Exception) or isinstance(device, Exception):
        assert type(device) is type(cpu), f"{where}: cpu {cpu!r}, opencl {device!r}"
        return "ran"
    cpu, device = _flat(cpu), _flat(device)
    assert len(cpu) == len(device), where
    for a, b in zip(cpu, device):
        if not isinstance(a, strata.Tensor):
            assert _same_value(a, b), f"{where}: {b!r} != cpu {a!r}"
            continue
        assert b.device.type == "opencl" or a.device.type == "cpu", where
        assert (a.dtype, tuple(a.shape)) == (b.dtype, tuple(b.shape)), \
            f"{where}: {b.dtype}{tuple(b.shape)} != cpu {a.dtype}{tuple(a.shape)}"
        if sample.random:
            continue
        name = a.dtype.name
        if name in TOL:
            atol, rtol = DEVICE_TOL.get(name, TOL[name])
            atol, rtol = max(atol, sample.atol or 0), max(rtol, sample.rtol or 0)
            wide = np.complex128 if a.dtype.is_complex else np.float64   # keep imaginary parts
            np.testing.assert_allclose(_values(b).astype(wide), _values(a).astype(wide),
                                       atol=atol, rtol=rtol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(_values(b), _values(a), err_msg=where)
    return "ran"


# A cold PoCL run of every op builds a few hundred programs (16 min on 2 cores): by default the
# suite sweeps every 8th op (a fixed spread over the families) besides the training ops below;
# STRATA_TEST_OPENCL_OPDB=all sweeps them all (docs/opencl.md).
SWEEP_ALL = os.environ.get("STRATA_TEST_OPENCL_OPDB") == "all"
SWEPT = sorted(SAMPLES) if SWEEP_ALL else sorted(SAMPLES)[::8]


@pytest.mark.parametrize("qualname", SWEPT)
def test_op_runs_on_opencl_or_raises_not_implemented(qualname):
    for i, sample in enumerate(SAMPLES[qualname]):
        check_sample(sample, f"{qualname} sample {sample.name or i}")


# What the examples' training needs (MLP, CNN, tiny GPT with AdamW and clip_grad_norm_): none
# of these may raise NotImplementedError on opencl.
TRAINING_OPS = (
    "aten::addmm", "aten::mm", "aten::bmm", "aten::relu", "aten::threshold_backward",
    "aten::_log_softmax", "aten::_log_softmax_backward_data", "aten::_softmax",
    "aten::_softmax_backward_data", "aten::nll_loss_forward", "aten::nll_loss_backward",
    "aten::convolution", "aten::max_pool2d_with_indices",
    "aten::max_pool2d_with_indices_backward", "aten::avg_pool2d", "aten::native_batch_norm",
    "aten::native_layer_norm", "aten::embedding", "aten::gelu", "aten::gelu_backward",
    "aten::native_dropout", "aten::bernoulli.p", "aten::linalg_vector_norm", "aten::stack",
    "aten::clamp.Tensor", "aten::sort.stable", "aten::topk", "aten::cumsum",
    "aten::randn", "aten::rand", "aten::randint.low", "aten::normal_", "aten::uniform_",
)


# The samplers and special functions that run on the device (no longer raising)
SAMPLER_AND_SPECIAL_OPS = (
    "aten::randperm", "aten::_standard_gamma", "aten::_standard_gamma_grad",
    "aten::_sample_dirichlet", "aten::poisson",
    "aten::binomial", "aten::igamma", "aten::igamma_", "aten::igammac", "aten::igammac_",
    "aten::special_zeta",
)


# eig on the host (opencl_linalg_host.py) and the embedding kernels (opencl_embedding.py)
HOST_LINALG_AND_EMBEDDING_OPS = (
    "aten::linalg_eig", "aten::linalg_eigvals", "aten::embedding_renorm_",
    "aten::embedding_dense_backward",
)


@pytest.mark.parametrize("qualname", TRAINING_OPS + SAMPLER_AND_SPECIAL_OPS +
                         HOST_LINALG_AND_EMBEDDING_OPS)
def test_training_ops_run_on_opencl(qualname):
    ran = [check_sample(s, f"{qualname} sample {s.name or i}")
           for i, s in enumerate(SAMPLES[qualname])]
    assert "ran" in ran, f"{qualname} raised NotImplementedError for every sample"
