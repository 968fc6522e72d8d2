"""The safetensors format's structure mode: a tree of containers and plain values as JSON,
tensors as safetensors keys. Loading it is JSON plus arrays: nothing to execute."""

from collections import Counter, OrderedDict

import numpy as np

from .._tensor import Tensor
from ..core import dtype as D
from ..core.device import device as Device
from ..core.shape import Size
from ..nn.parameter import Parameter
from ._safetensors import SUPPORTED as _NP_SUPPORTED

PICKLE_KEY = "__strata_pickle__"
_MAPPINGS = {dict: "dict", OrderedDict: "odict", Counter: "counter"}


def to_array(t):
    """A tensor's elements as a dense, C-ordered host array (a copy only when needed)."""
    if t.device.type == "meta":
        raise RuntimeError("strata.save: cannot save a tensor on the 'meta' device: it has no "
                           "data")
    return c_order(t.detach().cpu().numpy())


def c_order(arr):
    # Not np.ascontiguousarray: it turns a 0-dim array into a 1-element 1-dim one.
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


class TensorTable:
    """The tensors of one file: each distinct tensor object gets one safetensors key."""

    def __init__(self):
        self.arrays = {}
        self._keys = {}   # id(tensor) -> key
        self._alive = []  # keep tensors alive so ids stay unique while saving

    def key_for(self, t, hint):
        key = self._keys.get(id(t))
        if key is None:
            key = self._new_key(hint)
            self._keys[id(t)] = key
            self.arrays[key] = to_array(t)
            self._alive.append(t)
        return key

    def key_for_array(self, arr, hint):
        key = self._new_key(hint)
        self.arrays[key] = c_order(arr)
        return key

    def _new_key(self, hint):
        key, n = hint, 1
        while key in self.arrays or key == PICKLE_KEY:
            key, n = f"{hint}#{n}", n + 1
        return key


def tensor_node(table, t, hint):
    if t.dtype.is_complex:
        raise TypeError(f"safetensors has no complex dtypes ({hint} is {t.dtype}): save to a "
                        f".pt path (PyTorch's format) or save strata.view_as_real(tensor)")
    node = {"tensor": table.key_for(t, hint)}
    if t.requires_grad:
        node["requires_grad"] = True
    if t.device.type != "cpu":
        node["device"] = str(t.device)
    if isinstance(t, Parameter):
        node["parameter"] = True
    return node


# --- structure mode: JSON trees ------------------------------------------------------------------

class NotPlain(Exception):
    """The object holds something JSON cannot describe: pickle it instead."""


def encode(obj, table, path):
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is float:
        return obj if np.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, Tensor):
        return tensor_node(table, obj, path or "tensor")
    if isinstance(obj, np.ndarray) and obj.dtype in _NP_SUPPORTED:
        return {"tensor": table.key_for_array(obj, path or "array"), "numpy": True}
    if isinstance(obj, np.generic) and obj.dtype in _NP_SUPPORTED:
        return {"numpy_scalar": [obj.dtype.name, obj.item()]}
    if isinstance(obj, D.dtype):
        return {"dtype": obj.name}
    if isinstance(obj, Device):
        return {"device": str(obj)}
    if isinstance(obj, Size):
        return {"size": list(obj)}
    kind = _MAPPINGS.get(type(obj))
    if kind is not None:
        node = {kind: [[_encode_key(k), encode(v, table, _join(path, k))]
                       for k, v in obj.items()]}
        meta = getattr(obj, "_metadata", None)  # nn.Module.state_dict()'s version records
        if meta is not None:
            node["metadata"] = encode(meta, table, _join(path, "_metadata"))
        return node
    if type(obj) in (list, tuple):
        return {type(obj).__name__: [encode(v, table, _join(path, i))
                                     for i, v in enumerate(obj)]}
    raise NotPlain(type(obj).__name__)


def _encode_key(k):
    if k is None or type(k) in (bool, int, str):
        return k
    if type(k) is float:
        return {"float": repr(k)}
    if type(k) is tuple:
        return {"tuple": [_encode_key(v) for v in k]}
    raise NotPlain(type(k).__name__)


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def decode(node, tensors):
    """Rebuild a value from its JSON node (only the node kinds ``encode`` writes)."""
    if not isinstance(node, dict):
        if isinstance(node, list):
            raise ValueError("a bare JSON list in the structure")
        return node
    if "tensor" in node:
        return tensors(node)
    kind = next((k for k in node if k != "metadata"), None)
    value = node.get(kind)
    if kind in ("dict", "odict", "counter"):
        cls = {"dict": dict, "odict": OrderedDict, "counter": Counter}[kind]
        items = {_decode_key(k): decode(v, tensors) for k, v in value}
        out = items if cls is dict else cls(items)  # Counter(pairs) would count the pairs
        if "metadata" in node:
            out._metadata = decode(node["metadata"], tensors)
        return out
    if kind == "list":
        return [decode(v, tensors) for v in value]
    if kind == "tuple":
        return tuple(decode(v, tensors) for v in value)
    if kind == "float":
        return float(value)
    if kind == "numpy_scalar":
        dtype = np.dtype(value[0])
        if dtype not in _NP_SUPPORTED:
            raise ValueError(f"unsupported NumPy scalar type {value[0]!r}")
        return dtype.type(value[1])
    if kind == "dtype":
        return D._by_name(value)
    if kind == "device":
        return Device(value)
    if kind == "size":
        return Size(value)
    raise ValueError(f"unknown node {sorted(node)}")


def _decode_key(k):
    if isinstance(k, dict):
        if "tuple" in k:
            return tuple(_decode_key(v) for v in k["tuple"])
        return float(k["float"])
    return k
