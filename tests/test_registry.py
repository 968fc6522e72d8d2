"""Every op has a row in every layer table it needs: a primitive has a meta function, a CPU
kernel and a Meta kernel; a view op has a meta function (its kernel is shared); a composite op has
a decomposition. The failure message names each missing cell."""

import strata  # noqa: F401  (registers every backend)
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
    """A composite with its own CPU kernel would bypass the decomposition silently."""
    doubled = [op.qualname for op in _aten_ops() if op.decomposition is not None
               and (k := resolve_key(op, DispatchKey.CPU)) is not None
               and k.source == "kernel"]
    assert not doubled, f"composite ops with a CPU kernel: {doubled}"


def test_schema_round_trips():
    for op in _aten_ops():
        text = str(op.schema)
        assert text.startswith(f"aten::{op.name}(")
