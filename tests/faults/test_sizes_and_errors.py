"""Huge sizes, NumPy's errors and warnings, ``Tensor.addmm_``, and CUDA requests: each raises
what PyTorch raises (the type and the words), fast, and before anything is allocated or written.

The NumPy sweep runs every op sample of ``tests/op_samples`` with its float inputs turned into
edge values (inf, -inf, nan, 3e38, 0) under a user's strictest settings, ``warnings.simplefilter
("error")`` and ``np.seterr(all="raise")``: PyTorch is silent about IEEE arithmetic, so no
RuntimeWarning, FloatingPointError or other NumPy error may reach the user where PyTorch succeeds.
"""

import time
import warnings

import numpy as np
import pytest
import torch
from helpers import to_strata, to_torch
from hypothesis import given, settings
from hypothesis import strategies as st
from op_samples import FAMILIES, all_samples

import strata

# --- sizes ----------------------------------------------------------------------------------------

OVERFLOWING = {   # every one of these needs more than 2**63 - 1 bytes
    "empty": lambda m: m.empty(2 ** 62),
    "empty_2d": lambda m: m.empty(2 ** 40, 2 ** 40),
    "zeros": lambda m: m.zeros(2 ** 62),
    "ones": lambda m: m.ones(2 ** 62),
    "full": lambda m: m.full((2 ** 62,), 1.0),
    "rand": lambda m: m.rand(2 ** 62),
    "randn": lambda m: m.randn(2 ** 40, 2 ** 30),
    "randint": lambda m: m.randint(0, 5, (2 ** 62,)),
    "arange": lambda m: m.arange(0, 2 ** 62),
    "linspace": lambda m: m.linspace(0, 1, 2 ** 62),
    "eye": lambda m: m.eye(2 ** 31),
    "empty_strided": lambda m: m.empty_strided((2 ** 40,), (2 ** 40,)),
    "zeros_like": lambda m: m.zeros_like(m.ones(1).expand(2 ** 62)),
    "new_zeros": lambda m: m.ones(1).new_zeros(2 ** 62),
    "repeat": lambda m: m.ones(2).repeat(2 ** 31, 2 ** 31),
    "tile": lambda m: m.ones(2).tile(2 ** 31, 2 ** 31),
    "expand_contiguous": lambda m: m.ones(1).expand(2 ** 31, 2 ** 31).contiguous(),
    "expand_clone": lambda m: m.ones(1).expand(2 ** 31, 2 ** 31).clone(),
    "resize_": lambda m: m.ones(2).resize_(2 ** 62),
    "randperm": lambda m: m.randperm(2 ** 62),
    "new_full": lambda m: m.ones(1).new_full((2 ** 62,), 1.0),
    "empty_like": lambda m: m.empty_like(m.ones(1).expand(2 ** 62)),
    "full_like": lambda m: m.full_like(m.ones(1).expand(2 ** 62), 2.0),
    "broadcast_to": lambda m: m.broadcast_to(m.ones(1), (2 ** 62,)).contiguous(),
    "meta": lambda m: m.empty(2 ** 62, device="meta"),
}
# Their results overflow too; PyTorch names the sizes, strata (NumPy found it) does not.
OVERFLOWING_RESULTS = {
    "tril_indices": lambda m: m.tril_indices(2 ** 32, 2 ** 32),
    "pad": lambda m: m.nn.functional.pad(m.ones(2), (2 ** 62, 0)),
    "pointwise": lambda m: m.ones(1).expand(2 ** 62) + 1,
    "repeat_interleave": lambda m: m.ones(2).repeat_interleave(2 ** 61),
    "index_select": lambda m: m.ones(3).index_select(0, m.zeros(1, dtype=m.int64).expand(2 ** 62)),
    "cumsum": lambda m: m.ones(1).expand(2 ** 62).cumsum(0),
    "kron": lambda m: m.kron(m.ones(1).expand(2 ** 32), m.ones(1).expand(2 ** 32)),
}


@pytest.mark.parametrize("name", OVERFLOWING)
def test_overflowing_sizes_raise_pytorchs_error_before_allocating(name):
    make = OVERFLOWING[name]
    with pytest.raises(RuntimeError) as expected:
        make(torch)
    start = time.perf_counter()
    with pytest.raises(RuntimeError) as got:
        make(strata)
    elapsed = time.perf_counter() - start
    # The same words and sizes (PyTorch adds the strides for some ops and not others).
    assert str(got.value).split(" and strides")[0] == str(expected.value).split(" and strides")[0]
    # Not a benchmark: filling the 16 GiB that repeat used to allocate took 13-30 s.
    assert elapsed < 1.0


@pytest.mark.parametrize("name", OVERFLOWING_RESULTS)
def test_overflowing_results_raise_runtime_error_at_once(name):
    make = OVERFLOWING_RESULTS[name]
    with pytest.raises(RuntimeError):
        make(torch)
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed|can't allocate"):
        make(strata)
    assert time.perf_counter() - start < 1.0


def test_the_issues_cases():
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        strata.empty(2 ** 62)
    with pytest.raises(RuntimeError, match=r"sizes=\[2147483648, 4294967296\]"):
        strata.ones(2).repeat(2 ** 31, 2 ** 31)
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        strata.ones(1).expand(2 ** 62, 4)
    assert strata.ones(1).expand(2 ** 62).shape == (2 ** 62,)   # a view needs no memory


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_more_memory_than_the_machine_has_is_the_cpu_allocators_error(dtype):
    n = 2 ** 47 // getattr(np, dtype)().itemsize     # 128 TiB: refused by the OS at once
    with pytest.raises(RuntimeError) as expected:
        torch.zeros(n, dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError) as got:
        strata.zeros(n, dtype=getattr(strata, dtype))
    assert "DefaultCPUAllocator: can't allocate memory: you tried to allocate 140737488355328 " \
           "bytes. Error code 12" in str(got.value)
    assert "can't allocate memory" in str(expected.value)
    assert strata.ones(3).sum().item() == 3.0          # and the process carries on


# --- NumPy's warnings and errors ------------------------------------------------------------------

EDGES = {"inf": np.inf, "-inf": -np.inf, "nan": np.nan, "huge": 3e38, "zero": 0.0}
NUMPY_CLASSES = (RuntimeWarning, FloatingPointError, ValueError, MemoryError, OverflowError,
                 ZeroDivisionError, TypeError, IndexError)


def _with_edges(inputs, fill):
    out = []
    for x in inputs:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.size:
            x = x.copy()
            with np.errstate(all="ignore"):
                x.flat[::2] = fill
        out.append(x)
    return tuple(out)


def _leak(sample, inputs):
    """The NumPy-looking exception strata raised where PyTorch succeeds (None if none)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sample.fn(strata, *(to_strata(x) for x in inputs))
        return None
    except Exception as exc:
        if not isinstance(exc, NUMPY_CLASSES) or isinstance(exc, UserWarning):
            return None            # strata's own error, or a warning PyTorch gives too
        error = exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sample.fn(torch, *(to_torch(x) for x in inputs))
        except Exception:          # PyTorch refuses too: not a leak (its wording is tested
            return None            # by the op's own error tests)
    return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("family", FAMILIES)
def test_no_numpy_warning_or_error_reaches_the_user(family):
    samples = {q: s for q, s in all_samples().items() if _family_of(q, family)}
    leaks = []
    old = np.seterr(all="raise")
    try:
        for qualname, cases in samples.items():
            for i, sample in enumerate(cases):
                if sample.random and "binomial" in qualname:
                    continue      # PyTorch's binomial never returns for inf counts
                for edge, fill in [("orig", None), *EDGES.items()]:
                    inputs = sample.inputs if fill is None else _with_edges(sample.inputs, fill)
                    leak = _leak(sample, inputs)
                    if leak:
                        leaks.append(f"{qualname}[{sample.name or i}] with {edge}: {leak}")
    finally:
        np.seterr(**old)
    assert not leaks, "\n".join(leaks[:20])


def _family_of(qualname, family):
    from importlib import import_module
    return qualname in import_module(f"op_samples.{family}").SAMPLES


# --- Tensor.addmm_ --------------------------------------------------------------------------------

@settings(max_examples=15)
@given(n=st.integers(1, 4), k=st.integers(0, 4), m=st.integers(1, 4),
       beta=st.sampled_from([0, 0.5, 1, 2]), alpha=st.sampled_from([1, -1.5, 3]),
       dtype=st.sampled_from(["float32", "float64", "int64"]))
def test_addmm__matches_torch(n, k, m, beta, alpha, dtype):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    arrays = [rng.integers(-3, 4, shape).astype(dtype) for shape in ((n, m), (n, k), (k, m))]
    if dtype == "int64":
        beta, alpha = int(beta), int(alpha)
    out = {}
    for lib, conv in ((strata, to_strata), (torch, to_torch)):
        s, a, b = map(conv, arrays)
        assert s.addmm_(a, b, beta=beta, alpha=alpha) is s
        out[lib] = s.numpy()
    np.testing.assert_allclose(out[strata], out[torch], rtol=1e-6)


ADDMM_ERRORS = [
    ((3,), (2, 4), (4, 3), {}),                        # broadcast would change self's shape
    ((2, 3), (2, 4), (5, 3), {}),                      # inner sizes differ
    ((2, 3), (2, 4), (4, 3, 1), {}),                   # not a matrix
    ((2, 3), (2, 4), (4, 3), {"self_dtype": "float64"}),
    ((2, 3), (2, 4), (4, 3), {"mat2_dtype": "float64"}),
    ((2, 3), (2, 4), (4, 3), {"expanded": True}),      # self writes one element twice
]


@pytest.mark.parametrize("shapes", ADDMM_ERRORS)
def test_addmm__errors_are_pytorchs_and_leave_self_unchanged(shapes):
    self_shape, a_shape, b_shape, how = shapes

    def call(lib, conv):
        s = conv(np.arange(np.prod(self_shape), dtype=how.get("self_dtype", "float32"))
                 .reshape(self_shape))
        s = s[:1].expand(*self_shape) if how.get("expanded") else s
        a = conv(np.ones(a_shape, np.float32))
        b = conv(np.ones(b_shape, how.get("mat2_dtype", "float32")))
        before = s.clone()
        with pytest.raises(RuntimeError) as info:
            s.addmm_(a, b)
        assert (s == before).all()
        return str(info.value)

    assert call(strata, to_strata) == call(torch, to_torch)


def test_addmm__gradient_matches_torch():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in ((2, 3), (2, 4), (4, 3))]
    grads = {}
    for lib, conv in ((strata, to_strata), (torch, to_torch)):
        s, a, b = (conv(x).requires_grad_() for x in arrays)
        out = s * 1                                   # addmm_ on a non-leaf
        out.addmm_(a, b, beta=0.5, alpha=2)
        assert out.grad_fn is not None
        (out * out).sum().backward()
        grads[lib] = [t.grad.numpy() for t in (s, a, b)]
    for mine, theirs in zip(grads[strata], grads[torch]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)
    leaf = strata.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in"):
        leaf.addmm_(strata.ones(2, 4), strata.ones(4, 3))


# --- CUDA -----------------------------------------------------------------------------------------

CUDA_REQUESTS = {
    "to": lambda m: m.ones(2).to("cuda"),
    "to_index": lambda m: m.ones(2).to("cuda:1"),
    "to_device": lambda m: m.ones(2).to(m.device("cuda")),
    "to_kwargs": lambda m: m.ones(2).to(device="cuda", dtype=m.float64),
    "cuda": lambda m: m.ones(2).cuda(),
    "ones": lambda m: m.ones(2, device="cuda"),
    "zeros_device": lambda m: m.zeros(2, device=m.device("cuda", 0)),
    "empty": lambda m: m.empty(2, device="cuda"),
    "tensor": lambda m: m.tensor([1.0], device="cuda"),
    "arange": lambda m: m.arange(3, device="cuda"),
    "randn": lambda m: m.randn(3, device="cuda"),
    "zeros_like": lambda m: m.zeros_like(m.ones(2), device="cuda"),
    "new_ones": lambda m: m.ones(2).new_ones(2, device="cuda"),
    "module_cuda": lambda m: m.nn.Linear(2, 2).cuda(),
    "module_to": lambda m: m.nn.Linear(2, 2).to("cuda"),
}


@pytest.mark.parametrize("name", CUDA_REQUESTS)
def test_cuda_requests_raise_pytorchs_assertion_error(name):
    with pytest.raises(AssertionError) as expected:
        CUDA_REQUESTS[name](torch)
    with pytest.raises(AssertionError) as got:
        CUDA_REQUESTS[name](strata)
    assert str(got.value) == str(expected.value) == "Torch not compiled with CUDA enabled"
