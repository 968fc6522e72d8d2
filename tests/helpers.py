"""The one comparison helper every op test uses: run the same function on strata and on PyTorch
(the oracle) with the same NumPy inputs, and compare values, dtypes, shapes (and strides).

    check(lambda m, x, y: m.add(x, y), a, b)          # m is strata or torch
    check_error(lambda m, x: x.view(5), a)            # both raise, same exception class
    check_meta(lambda m, x: m.exp(x), a)              # meta result matches the real one
"""

import numpy as np
import torch

import strata

DTYPE_PAIRS = {
    "float32": (strata.float32, torch.float32), "float64": (strata.float64, torch.float64),
    "float16": (strata.float16, torch.float16), "bfloat16": (strata.bfloat16, torch.bfloat16),
    "int64": (strata.int64, torch.int64), "int32": (strata.int32, torch.int32),
    "int16": (strata.int16, torch.int16), "int8": (strata.int8, torch.int8),
    "uint8": (strata.uint8, torch.uint8), "bool": (strata.bool, torch.bool),
}
TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
       "float64": (1e-10, 1e-12), "complex64": (1e-5, 1e-6), "complex128": (1e-10, 1e-12)}


def to_strata(x, noncontiguous=False):
    if isinstance(x, np.ndarray):
        t = strata.tensor(x)
        return _noncontig(strata, t) if noncontiguous else t
    if isinstance(x, (list, tuple)) and x and all(isinstance(a, np.ndarray) for a in x):
        return type(x)(to_strata(a, noncontiguous) for a in x)
    return x


def to_torch(x, noncontiguous=False):
    if isinstance(x, np.ndarray):
        t = torch.tensor(x)
        return _noncontig(torch, t) if noncontiguous else t
    if isinstance(x, (list, tuple)) and x and all(isinstance(a, np.ndarray) for a in x):
        return type(x)(to_torch(a, noncontiguous) for a in x)
    return x


def _noncontig(m, t):
    """The same values, laid out non-contiguously (every other element of a bigger tensor)."""
    if t.ndim == 0:
        return t
    big = m.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
    view = big[..., ::2]
    view.copy_(t)
    return view


def dtype_name(d):
    return str(d).split(".")[-1]


def assert_same(s, t, *, atol=None, rtol=None, check_stride=False, equal_nan=True, path="out"):
    """strata result ``s`` equals PyTorch result ``t`` (recursing into tuples/lists)."""
    if isinstance(t, (tuple, list)):
        assert isinstance(s, (tuple, list)), f"{path}: strata returned {type(s)}, torch a sequence"
        assert len(s) == len(t), f"{path}: {len(s)} outputs vs torch's {len(t)}"
        for i, (a, b) in enumerate(zip(s, t)):
            assert_same(a, b, atol=atol, rtol=rtol, check_stride=check_stride, path=f"{path}[{i}]")
        return
    if not isinstance(t, torch.Tensor):
        if isinstance(t, float) and np.isnan(t):
            assert np.isnan(s), f"{path}: {s} != nan"
        else:
            assert s == t or np.isclose(s, t), f"{path}: {s!r} != torch's {t!r}"
        return
    assert isinstance(s, strata.Tensor), f"{path}: strata returned {type(s).__name__}"
    assert dtype_name(s.dtype) == dtype_name(t.dtype), \
        f"{path}: dtype {s.dtype} != torch's {t.dtype}"
    assert tuple(s.shape) == tuple(t.shape), f"{path}: shape {tuple(s.shape)} != {tuple(t.shape)}"
    if check_stride:
        assert s.stride() == t.stride(), f"{path}: strides {s.stride()} != torch's {t.stride()}"
    name = dtype_name(t.dtype)
    a = np.asarray(s.detach().float().numpy() if name in ("bfloat16",) else s.detach().numpy())
    b = (t.detach().float() if name == "bfloat16" else t.detach().resolve_conj()).numpy()
    if name in TOL:
        d_atol, d_rtol = TOL[name]
        wide = np.complex128 if name.startswith("complex") else np.float64
        np.testing.assert_allclose(a.astype(wide), b.astype(wide),
                                   atol=d_atol if atol is None else atol,
                                   rtol=d_rtol if rtol is None else rtol,
                                   equal_nan=equal_nan, err_msg=path)
    else:
        np.testing.assert_array_equal(a, b, err_msg=path)


def check(fn, *inputs, atol=None, rtol=None, check_stride=False, noncontiguous=False):
    """Run ``fn(strata, *inputs)`` and ``fn(torch, *inputs)`` and compare the results."""
    t_out = fn(torch, *(to_torch(x, noncontiguous) for x in inputs))
    s_out = fn(strata, *(to_strata(x, noncontiguous) for x in inputs))
    assert_same(s_out, t_out, atol=atol, rtol=rtol, check_stride=check_stride)
    return s_out, t_out


def check_error(fn, *inputs, match=None):
    """Both libraries raise, with the same exception class (and strata's message matches)."""
    import pytest
    t_inputs = [to_torch(x) for x in inputs]
    with pytest.raises(Exception) as t_err:
        fn(torch, *t_inputs)
    s_inputs = [to_strata(x) for x in inputs]
    before = [x.clone() if isinstance(x, strata.Tensor) else x for x in s_inputs]
    with pytest.raises(Exception) as s_err:
        fn(strata, *s_inputs)
    assert type(s_err.value).__name__ == type(t_err.value).__name__ or \
        isinstance(s_err.value, type(t_err.value)), \
        f"strata raised {type(s_err.value).__name__}: {s_err.value}; torch raised " \
        f"{type(t_err.value).__name__}: {t_err.value}"
    if match is not None:
        import re
        assert re.search(match, str(s_err.value)), f"{s_err.value!r} does not match {match!r}"
    for b, a in zip(before, s_inputs):  # bad input changes nothing
        if isinstance(a, strata.Tensor):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    return s_err.value, t_err.value


def check_meta(fn, *inputs):
    """``fn`` on meta tensors gives the shape, dtype and strides of ``fn`` on real ones."""
    real = fn(strata, *(to_strata(x) for x in inputs))
    meta_inputs = [to_strata(x).to("meta") if isinstance(x, np.ndarray) else x for x in inputs]
    meta = fn(strata, *meta_inputs)
    _compare_meta(meta, real)


def _compare_meta(meta, real):
    if isinstance(real, (tuple, list)):
        for m, r in zip(meta, real):
            _compare_meta(m, r)
        return
    if not isinstance(real, strata.Tensor):
        return
    assert meta.device.type == "meta"
    assert meta.dtype is real.dtype, f"meta dtype {meta.dtype} != {real.dtype}"
    assert tuple(meta.shape) == tuple(real.shape), f"meta shape {meta.shape} != {real.shape}"
    assert meta.stride() == real.stride(), f"meta strides {meta.stride()} != {real.stride()}"


def _plain(x):
    """A library-neutral form of a non-tensor result: dtypes and devices by name, sizes as
    tuples, ``torch.`` spelled ``strata.`` in strings."""
    if isinstance(x, (strata.dtype, torch.dtype)):
        return ("dtype", dtype_name(x))
    if isinstance(x, (strata.device, torch.device)):
        return ("device", str(x))
    if isinstance(x, (strata.Size, torch.Size)):
        return tuple(x)
    if isinstance(x, str):
        return x.replace("torch.", "strata.")
    if isinstance(x, (list, tuple)) and not any(isinstance(v, (strata.Tensor, torch.Tensor))
                                                for v in x):
        return type(x)(_plain(v) for v in x)
    return x


def check_outcome(fn, *inputs, **kwargs):
    """``fn(strata, ...)`` behaves as ``fn(torch, ...)``: both raise the same exception class, or
    both return equal results (tensors compared by ``assert_same``; dtypes, devices, sizes and
    strings by name). Returns strata's result or exception."""
    try:
        t_out = fn(torch, *(to_torch(x) for x in inputs))
    except Exception as t_err:  # noqa: BLE001 - any exception class must be matched
        try:
            fn(strata, *(to_strata(x) for x in inputs))
        except Exception as s_err:  # noqa: BLE001
            assert isinstance(s_err, type(t_err)) or \
                type(s_err).__name__ == type(t_err).__name__, \
                f"strata raised {type(s_err).__name__}: {s_err}; torch raised " \
                f"{type(t_err).__name__}: {t_err}"
            return s_err
        raise AssertionError(f"torch raised {type(t_err).__name__}: {t_err}; strata did not")
    s_out = fn(strata, *(to_strata(x) for x in inputs))
    if isinstance(t_out, torch.Tensor) and t_out.is_meta:  # no values: compare the metadata
        assert isinstance(s_out, strata.Tensor) and s_out.is_meta, f"strata returned {s_out!r}"
        assert (tuple(s_out.shape), dtype_name(s_out.dtype)) == \
            (tuple(t_out.shape), dtype_name(t_out.dtype)), f"{s_out!r} != torch's {t_out!r}"
    elif isinstance(t_out, np.ndarray):
        assert isinstance(s_out, np.ndarray) and s_out.dtype == t_out.dtype, \
            f"strata returned {s_out!r}, torch {t_out!r}"
        np.testing.assert_array_equal(s_out, t_out)
    elif isinstance(t_out, torch.Tensor) or (isinstance(t_out, (list, tuple)) and t_out and
                                             isinstance(t_out[0], torch.Tensor)):
        assert_same(s_out, t_out, **kwargs)
    else:
        assert _plain(s_out) == _plain(t_out), f"strata: {s_out!r}; torch: {t_out!r}"
    return s_out


def native_paths(library: str, function: str):
    """A ``path`` fixture running a test once on the generated C kernels and once with them
    switched off (the NumPy kernels); the native half asserts that ``library``'s ``function``
    really loaded (CI machines have a C compiler)."""
    import pytest

    from strata import config
    from strata.backends.cpu import native

    @pytest.fixture(params=["native", "numpy"])
    def path(request, monkeypatch):
        monkeypatch.setattr(config, "native_kernels", request.param == "native")
        native.reset()
        assert (native.function(library, function) is not None) == (request.param == "native")
        yield request.param
        native.reset()
    return path


def flatten_outputs(out):
    """An op's outputs as one flat list (nested tuples and lists opened)."""
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in flatten_outputs(o)]
    return [out]


def is_float_array(x):
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def recording_backend(runs):
    """The inductor backend (AOT autograd with the min-cut partitioner), appending each compiled
    graph to ``runs`` so a test can read its ``ir_post_fusion`` or ``output_code``."""
    from strata.compile.aot import aot_module_simplified, min_cut_rematerialization_partition
    from strata.compile.inductor.compile_fx import compile_fx

    def compiler(gm, example_inputs):
        run = compile_fx(gm, example_inputs)
        runs.append(run)
        return run

    def backend(gm, example_inputs):
        return aot_module_simplified(gm, example_inputs, fw_compiler=compiler,
                                     bw_compiler=compiler,
                                     partition_fn=min_cut_rematerialization_partition)
    return backend
