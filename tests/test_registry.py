"""Every op has a row in every layer table it needs: a primitive has a meta function, a CPU
kernel and a Meta kernel; a view op has a meta function (its kernel is shared); a composite op has
a decomposition. The failure message names each missing cell."""

import numpy as np

import strata
from strata.backends.composite import WITH_OWN_DERIVATIVE
from strata.dispatch import DispatchKey
from strata.dispatch.dispatcher import resolve_key
from strata.ops.op import REGISTRY


def _aten_ops():
    return [op for op in REGISTRY.values() if op.namespace == "aten"]


def test_every_op_has_its_rows():
    missing = []
    for op in _aten_ops():
        if op.decomposition is not None:
            continue
        if op.meta is None:
            missing.append(f"{op.qualname}: meta function (ops/)")
        keys = (DispatchKey.CPU, DispatchKey.Meta)
        if "sparse" in op.tags:  # a kernel for sparse inputs or for making sparse outputs
            keys = ((DispatchKey.CPU, DispatchKey.SparseCPU),)
        for key in keys:
            options = key if isinstance(key, tuple) else (key,)
            kernels = [resolve_key(op, k) for k in options]
            if all(k is None or k.fallthrough for k in kernels):
                missing.append(f"{op.qualname}: {' or '.join(map(str, options))} kernel")
    assert not missing, "missing rows:\n" + "\n".join(missing)


def test_composites_have_no_backend_kernels():
    """A CompositeImplicitAutograd op with its own CPU kernel would bypass the decomposition
    silently (autograd differentiates the decomposition). A CompositeExplicitAutograd one (a
    derivative row of its own, backends/composite.py) may have one, as an ATen op's CPU kernel
    beats its CompositeExplicitAutograd kernel: autograd uses the op's row either way and the
    compiler its decomposition; test_explicit_composites_kernels_match_their_decomposition
    checks the values."""
    doubled = [op.qualname for op in _aten_ops() if op.decomposition is not None
               and op not in WITH_OWN_DERIVATIVE
               and (k := resolve_key(op, DispatchKey.CPU)) is not None
               and k.source == "kernel"]
    assert not doubled, f"composite ops with a CPU kernel: {doubled}"


def test_explicit_composites_kernels_match_their_decomposition():
    """Each CPU kernel of a CompositeExplicitAutograd op gives its decomposition's values on
    the op db's samples (the decomposition is what the compiler traces)."""
    from helpers import TOL, to_strata
    from op_samples import all_samples

    from strata.dispatch.modes import TorchDispatchMode

    class Decomposed(TorchDispatchMode):
        """Runs ``op`` as its decomposition, every other op as usual."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is op:
                return op.decomposition(*args, **(kwargs or {}))
            return func(*args, **(kwargs or {}))
    samples = all_samples()
    kernels = [op for op in WITH_OWN_DERIVATIVE
               if (k := resolve_key(op, DispatchKey.CPU)) is not None and k.source == "kernel"]
    assert kernels, "no CompositeExplicitAutograd op has a CPU kernel: drop this test"
    for op in kernels:
        assert samples.get(op.qualname), f"{op.qualname}: no op db samples"
        for sample in samples[op.qualname]:
            args = [to_strata(x) for x in sample.inputs]
            got = sample.fn(strata, *args)
            with Decomposed():
                want = sample.fn(strata, *args)
            for g, w in zip(_flat(got), _flat(want), strict=True):
                if w is None or g is None:
                    assert g is w, f"{op.qualname} {sample.name}: {g!r} != {w!r}"
                    continue
                assert (g.dtype, tuple(g.shape)) == (w.dtype, tuple(w.shape)), op.qualname
                atol, rtol = DECOMPOSED_HALF.get(w.dtype.name) or TOL.get(w.dtype.name, (0, 0))
                np.testing.assert_allclose(g.float().numpy() if g.dtype.itemsize == 2 else
                                           g.numpy(), w.float().numpy() if w.dtype.itemsize
                                           == 2 else w.numpy(), atol=atol, rtol=rtol,
                                           err_msg=f"{op.qualname} {sample.name}")


# a half decomposition rounds after each of its ops, a kernel once (as ATen's, in float32)
DECOMPOSED_HALF = {"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 5e-2)}


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [value]


def test_schema_round_trips():
    for op in _aten_ops():
        text = str(op.schema)
        assert text.startswith(f"aten::{op.name}(")
