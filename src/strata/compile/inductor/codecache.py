"""The graph cache (Inductor's ``FxGraphCache``): a fresh process compiling a graph it compiled
before skips lowering and code generation.

An entry is ``<cache_dir>/fxgraph/<key>.json`` holding the wrapper's Python source, the C source,
the kernels' pointer counts and loop choices (timed ones under max-autotune), the eager
kernels the wrapper calls (by op name, or by name in ``NAMED_TARGETS`` for the Python functions
a graph may call, such as dropout's ``seeded_random``) and the non-tensor constants of its
calls (dtypes, devices, op overloads). The key hashes the graph's code, its inputs' and
constants' dtypes, shapes and strides, strata's version, the mode, the C build flags (the
kernels' numbers depend on them: Note [No contraction] in backends/cpu/native.py) and this
package's own source (a change to the compiler makes new keys). Entries follow the native
cache's rules (Note [Native cache] in backends/cpu/native.py): a hash beside each, checked
before use; a damaged entry is made again with a warning. A graph whose wrapper calls
anything else is not cached.
"""

import hashlib
import json
from pathlib import Path

from ...backends.cpu import native
from ...backends.cpu.nn import convolution_relu
from ...core import dtype as D
from ...core.device import device as Device
from ...ops.op import OpOverload
from ...ops.op import ops as torch_ops
from ..aot.functionalize import seeded_random
from .eager_pool import max_pool2d_2x2, max_pool2d_backward_masked

_SOURCE_DIGEST = []

# The Python functions a wrapper may call, stored by these names and resolved when loaded: a
# name, not an import path, so a cache entry can only ever call what this table lists.
NAMED_TARGETS = {"seeded_random": seeded_random, "max_pool2d_2x2": max_pool2d_2x2,
                 "max_pool2d_backward_masked": max_pool2d_backward_masked,
                 "convolution_relu": convolution_relu}
_NAME_OF_TARGET = {f: name for name, f in NAMED_TARGETS.items()}


def _compiler_digest() -> str:
    if not _SOURCE_DIGEST:
        h = hashlib.sha256()
        for path in sorted(Path(__file__).parent.glob("*.py")):
            h.update(path.read_bytes())
        _SOURCE_DIGEST.append(h.hexdigest())
    return _SOURCE_DIGEST[0]


def _meta(value):
    if hasattr(value, "stride"):
        return [value.dtype.name, list(value.shape), list(value.stride())]
    return repr(value)


def graph_key(gm, example_inputs, constants, max_autotune=False) -> str:
    parts = [gm.code, native._strata_version(), _compiler_digest(), f"autotune={max_autotune}",
             " ".join(native.FLAGS),
             f"mutated={gm.meta.get('num_mutated', 0)} {gm.meta.get('mutated_inputs', [])}",
             json.dumps([_meta(v) for v in example_inputs]),
             json.dumps({k: _meta(v) for k, v in constants.items()})]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _entry(key) -> Path:
    return native.cache_folder("fxgraph") / f"{key}.json"


def _encode_target(target):
    if isinstance(target, OpOverload):
        return [target.namespace, target.name]
    name = _NAME_OF_TARGET.get(target)
    return None if name is None else ["named", name]


def _decode_target(item):
    namespace, name = item
    if namespace == "named":
        return NAMED_TARGETS[name]
    base, _, overload = name.partition(".")
    return getattr(getattr(getattr(torch_ops, namespace), base), overload or "default")


def _encode_const(value):
    if isinstance(value, D.dtype):
        return ["dtype", value.name]
    if isinstance(value, Device):
        return ["device", str(value)]
    if isinstance(value, OpOverload):     # the op a ``seeded_random`` step runs
        return ["op", value.namespace, value.name]
    return None


def _decode_const(item):
    kind, *text = item
    if kind == "op":
        return _decode_target(text)
    if kind == "dtype":
        return getattr(D, text[0] if text[0] != "bool" else "bool_")
    return Device(text[0])


def store(key, wrapper, source, signatures, targets, consts, choices, tuned) -> None:
    """Write the entry, unless something in it has no name to store it by."""
    named = {k: _encode_target(t) for k, t in targets.items()}
    if any(v is None for v in named.values()):
        return
    encoded = {k: _encode_const(v) for k, v in consts.items()}
    if any(v is None for v in encoded.values()):
        return
    entry = {"wrapper": wrapper, "source": source,
             "pointers": {name: len(sig) - 2 for name, sig in signatures.items()},
             "targets": named,
             "consts": encoded, "choices": choices, "tuned": tuned}
    native.write_verified(_entry(key), json.dumps(entry).encode())


def load(key):
    """(wrapper, source, pointer counts, targets, consts, choices, tuned) of a stored entry, or
    None. ``choices``: each kernel's [C function, rows, rows per chunk, walks every row];
    ``tuned``: they were timed (max-autotune)."""
    data = native.read_verified(_entry(key))
    if data is None:
        return None
    entry = json.loads(data)
    targets = {step: _decode_target(item) for step, item in entry["targets"].items()}
    consts = {k: _decode_const(v) for k, v in entry["consts"].items()}
    return (entry["wrapper"], entry["source"], entry["pointers"], targets, consts,
            entry["choices"], entry["tuned"])
