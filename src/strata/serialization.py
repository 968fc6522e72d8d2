"""Checkpoints: ``strata.save`` / ``strata.load`` on the safetensors format; loading runs no code.

A file is a safetensors file (``safetensors`` writes and parses it; bfloat16 via ml_dtypes):
every tensor's data is a safetensors tensor, and the ``__metadata__`` header says what the file
holds (``strata.kind``):

* ``structure`` -- the object is a tree of dicts / OrderedDicts / lists / tuples / Counters and
  plain values (int, float, str, bool, None, dtype, device, Size) with tensors at the leaves. The
  tree is JSON in ``strata.structure``; a tensor leaf names its safetensors key. A flat dict of
  tensors (a ``state_dict``) uses its own keys as tensor names, so ``safetensors.torch.load_file``
  reads it too. Loading is JSON plus tensors: nothing to execute.
* ``pickle`` -- any other object (``strata.save(model, f)``) is pickled with every tensor's data
  kept out of the pickle (a ``persistent_id`` names its safetensors key). ``load`` unpickles it
  with a restricted unpickler (``weights_only=True``, the default) that admits strata's own types
  plus what the user allows with ``add_safe_globals`` / ``safe_globals``. ``weights_only=False``
  is an explicit opt-in, never a fallback: "models are programs".

``strata.sha256`` checksums names, dtypes, shapes, bytes and the structure, so a flipped bit is
an error, not a silently wrong weight. A file without ``strata.kind`` (written by
``safetensors.torch.save_file``, say) loads as a dict of tensors. Saving to a path writes a dot
temp file in the same directory, fsyncs it and renames it over the target, so an interrupted save
leaves the previous checkpoint intact.

    strata.save(model.state_dict(), "ckpt.safetensors")
    model.load_state_dict(strata.load("ckpt.safetensors"))
"""

import _compat_pickle
import copyreg
import hashlib
import importlib
import io
import json
import os
import pickle
import types
from collections import Counter, OrderedDict
from contextlib import contextmanager

import ml_dtypes
import numpy as np
from safetensors import SafetensorError, TensorSpec, deserialize, serialize, serialize_file

from ._tensor import Tensor, from_array
from .core import dtype as D
from .core.device import as_device
from .core.device import device as Device
from .core.shape import Size
from .nn.modules.module import Module
from .nn.parameter import Buffer, Parameter

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals"]

FORMAT_VERSION = "1"
_PICKLE_KEY = "__strata_pickle__"
_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
              "BF16": ml_dtypes.bfloat16, "I64": np.int64, "I32": np.int32, "I16": np.int16,
              "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
_MAX_HEADER = 100_000_000  # safetensors' own cap


# --- tensors <-> arrays --------------------------------------------------------------------------

def _to_array(t):
    """A tensor's elements as a dense, C-ordered host array (a copy only when needed)."""
    if t.device.type == "meta":
        raise RuntimeError("strata.save: cannot save a tensor on the 'meta' device: it has no "
                           "data")
    return _c_order(t.detach().cpu().numpy())


def _c_order(arr):
    # Not np.ascontiguousarray: it turns a 0-dim array into a 1-element 1-dim one.
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _from_array(arr):
    return from_array(arr if arr.flags.writeable else arr.copy())


def _rebuild_tensor(data, dtype_name, shape, requires_grad, device_str):
    """Unpickling a tensor (multiprocessing, deepcopy): fresh memory, same values and flags."""
    arr = np.frombuffer(bytearray(data), dtype=D._by_name(dtype_name).np).reshape(shape)
    t = from_array(arr)
    if device_str != "cpu":
        t = t.to(device_str)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _reduce_tensor(t):
    return (_rebuild_tensor, (_to_array(t).tobytes(), t.dtype.name, tuple(t.shape),
                              t.requires_grad, str(t.device)))


# Tensors pickle by value everywhere (DataLoader workers, copy.deepcopy, user pickles). Registered
# here rather than in _tensor.py, which sits below this layer.
copyreg.pickle(Tensor, _reduce_tensor)


class _TensorTable:
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
            self.arrays[key] = _to_array(t)
            self._alive.append(t)
        return key

    def key_for_array(self, arr, hint):
        key = self._new_key(hint)
        self.arrays[key] = _c_order(arr)
        return key

    def _new_key(self, hint):
        key, n = hint, 1
        while key in self.arrays or key == _PICKLE_KEY:
            key, n = f"{hint}#{n}", n + 1
        return key


def _tensor_node(table, t, hint):
    node = {"tensor": table.key_for(t, hint)}
    if t.requires_grad:
        node["requires_grad"] = True
    if t.device.type != "cpu":
        node["device"] = str(t.device)
    if isinstance(t, Parameter):
        node["parameter"] = True
    return node


# --- structure mode: JSON trees ------------------------------------------------------------------

class _NotPlain(Exception):
    """The object holds something JSON cannot describe: pickle it instead."""


def _encode(obj, table, path):
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is float:
        return obj if np.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, Tensor):
        return _tensor_node(table, obj, path or "tensor")
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
        node = {kind: [[_encode_key(k), _encode(v, table, _join(path, k))]
                       for k, v in obj.items()]}
        meta = getattr(obj, "_metadata", None)  # nn.Module.state_dict()'s version records
        if meta is not None:
            node["metadata"] = _encode(meta, table, _join(path, "_metadata"))
        return node
    if type(obj) in (list, tuple):
        return {type(obj).__name__: [_encode(v, table, _join(path, i))
                                     for i, v in enumerate(obj)]}
    raise _NotPlain(type(obj).__name__)


_MAPPINGS = {dict: "dict", OrderedDict: "odict", Counter: "counter"}
_NP_SUPPORTED = {np.dtype(d) for d in _ST_DTYPES.values()}


def _encode_key(k):
    if k is None or type(k) in (bool, int, str):
        return k
    if type(k) is float:
        return {"float": repr(k)}
    if type(k) is tuple:
        return {"tuple": [_encode_key(v) for v in k]}
    raise _NotPlain(type(k).__name__)


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _decode(node, tensors):
    """Rebuild a value from its JSON node (only the node kinds ``_encode`` writes)."""
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
        items = {_decode_key(k): _decode(v, tensors) for k, v in value}
        out = items if cls is dict else cls(items)  # Counter(pairs) would count the pairs
        if "metadata" in node:
            out._metadata = _decode(node["metadata"], tensors)
        return out
    if kind == "list":
        return [_decode(v, tensors) for v in value]
    if kind == "tuple":
        return tuple(_decode(v, tensors) for v in value)
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


# --- pickle mode --------------------------------------------------------------------------------

class _TensorPickler(pickle.Pickler):
    """Pickles an object graph; each tensor becomes a reference to a safetensors key."""

    def __init__(self, file, protocol, table):
        super().__init__(file, protocol)
        self.table = table

    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            return ("tensor", _tensor_node(self.table, obj, str(len(self.table.arrays))))
        return None


_safe_globals = []


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or ``(obj, "module.name")`` pairs) in weights-only loads."""
    _safe_globals.extend(safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


def get_safe_globals():
    return list(_safe_globals)


@contextmanager
def safe_globals(safe_globals):
    """``with strata.serialization.safe_globals([MyClass]): strata.load(f)``."""
    added = list(safe_globals)
    _safe_globals.extend(added)
    try:
        yield
    finally:
        for g in added:
            _safe_globals.remove(g)


def _global_name(g):
    if isinstance(g, tuple):
        return g[1]
    return f"{g.__module__}.{g.__qualname__}"


def _user_allowed():
    return {_global_name(g): (g[0] if isinstance(g, tuple) else g) for g in _safe_globals}


_BUILTIN_SAFE = {
    ("collections", "OrderedDict"): OrderedDict, ("collections", "Counter"): Counter,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex, ("builtins", "slice"): slice,
    ("strata.core.dtype", "_by_name"): D._by_name, ("strata.core.device", "device"): Device,
    ("strata.core.shape", "Size"): Size,
}


def _strata_nn_global(module, name):
    """strata's own nn classes (Modules, Parameter) and ``nn.functional`` functions."""
    if not (module == "strata.nn" or module.startswith("strata.nn.")):
        return None
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    # Only what strata.nn itself defines: not whatever a module happens to import.
    defined_in = getattr(obj, "__module__", None) or ""
    if not defined_in.startswith("strata.nn"):
        return None
    if isinstance(obj, type) and issubclass(obj, (Module, Parameter, Buffer)):
        return obj
    if defined_in.startswith("strata.nn.functional") and isinstance(obj, types.FunctionType):
        return obj
    return None


_WEIGHTS_ONLY_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, do "
    "those steps only if you trust the source of the checkpoint.\n"
    "\t(1) Re-running `strata.load` with `weights_only` set to `False` will likely succeed, but "
    "it can result in arbitrary code execution. Do it only if you got the file from a trusted "
    "source.\n"
    "\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in "
    "the following error message.\n"
    "\tWeightsUnpickler error: ")


class _RestrictedUnpickler(pickle.Unpickler):
    """Admits only allowlisted globals; tensors come from the safetensors payload."""

    def __init__(self, file, tensors):
        super().__init__(file)
        self._tensors = tensors
        self._user = _user_allowed()

    def find_class(self, module, name):
        # Protocol 2 writes Python 2 names (__builtin__.set); map them as pickle's own does.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        obj = _BUILTIN_SAFE.get((module, name))
        if obj is None:
            obj = self._user.get(f"{module}.{name}") or _strata_nn_global(module, name)
        if obj is None:
            raise pickle.UnpicklingError(
                f"{_WEIGHTS_ONLY_HINT}Unsupported global: GLOBAL {module}.{name} was not an "
                f"allowed global by default. Please use `strata.serialization.add_safe_globals("
                f"[{module}.{name}])` or the `strata.serialization.safe_globals([{module}."
                f"{name}])` context manager to allowlist this global if you trust this "
                f"class/function.")
        return obj

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor"
                and isinstance(pid[1], dict)):
            raise pickle.UnpicklingError(f"{_WEIGHTS_ONLY_HINT}unsupported persistent id "
                                         f"{pid!r}")
        return self._tensors(pid[1])


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global, as plain pickle (only for trusted files)."""

    def __init__(self, file, tensors):
        super().__init__(file)
        self._tensors = tensors

    def persistent_load(self, pid):
        return self._tensors(pid[1])


# --- save ---------------------------------------------------------------------------------------

def _checksum(kind, body, arrays):
    h = hashlib.sha256()
    h.update(kind.encode())
    h.update(body.encode())
    for key in sorted(arrays):
        arr = arrays[key]
        h.update(f"\0{key}\0{arr.dtype.name}\0{list(arr.shape)}\0".encode())
        h.update(_c_order(arr).reshape(-1).view(np.uint8))
    return h.hexdigest()


def _specs(arrays):
    return {k: TensorSpec(dtype=a.dtype.name, shape=list(a.shape), data_ptr=a.ctypes.data,
                          data_len=a.nbytes) for k, a in arrays.items()}


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a path or a binary file object) as a safetensors checkpoint."""
    table = _TensorTable()
    try:
        # A flat dict of tensors gets its keys as tensor names: plain safetensors readers
        # (safetensors.torch.load_file) see the state dict as it is.
        structure = _encode(obj, table, "")
        kind, body = "structure", json.dumps(structure, separators=(",", ":"), allow_nan=False)
    except _NotPlain:
        table = _TensorTable()
        buffer = io.BytesIO()
        _TensorPickler(buffer, max(2, pickle_protocol), table).dump(obj)
        table.arrays[_PICKLE_KEY] = np.frombuffer(buffer.getvalue(), dtype=np.uint8)
        kind, body = "pickle", ""
    arrays = table.arrays
    metadata = {"format": "pt", "strata.version": FORMAT_VERSION, "strata.kind": kind,
                "strata.sha256": _checksum(kind, body, arrays)}
    if kind == "structure":
        metadata["strata.structure"] = body
    specs = _specs(arrays)
    if isinstance(f, (str, os.PathLike)):
        _write_atomic(os.fspath(f), specs, metadata)
    else:
        f.write(bytes(serialize(specs, metadata=metadata)))


def _write_atomic(path, specs, metadata):
    """Write next to ``path`` and rename over it: readers see the old file or the new one."""
    directory, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    try:
        serialize_file(specs, tmp, metadata=metadata)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open directories; the rename is still atomic
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# --- load ---------------------------------------------------------------------------------------

def _corrupt(name, what):
    return RuntimeError(f"strata.load: {name} is not a valid checkpoint: {what} (the file is "
                        f"truncated or corrupted, or was not written by strata.save or "
                        f"safetensors)")


def _read_header(data, name):
    if data[:4] == b"PK\x03\x04":
        raise RuntimeError(f"strata.load: {name} is a zip archive (a torch.save file?); strata "
                           f"reads safetensors checkpoints only. Convert it with "
                           f"safetensors.torch.save_file(torch.load(...), path)")
    if len(data) < 8:
        raise _corrupt(name, f"the file has {len(data)} bytes, less than the 8-byte header size")
    n = int.from_bytes(data[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(data):
        raise _corrupt(name, f"the header claims {n} bytes but the file has {len(data) - 8}")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate key in the header: "
                             f"{next(k for k in keys if keys.count(k) > 1)!r}")
        return dict(pairs)

    try:
        header = json.loads(bytes(data[8:8 + n]).decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _corrupt(name, f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _corrupt(name, "the header is not a JSON object")
    return header.get("__metadata__") or {}


def _read_all(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read(), repr(os.fspath(f))
    return f.read(), f"file object {getattr(f, 'name', f)!r}"


def _map_location(map_location):
    """A function (tensor, saved device string) -> tensor, for ``map_location``."""
    if callable(map_location):
        def call(t, location):
            result = map_location(t, location)
            return t if result is None else result
        return call

    def move(t, location):
        if map_location is None:
            target = location
        elif isinstance(map_location, dict):
            target = map_location.get(location, location)
        else:
            target = map_location
        target = as_device(target)
        return t if target.type == "cpu" else t.to(target)
    return move


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what ``save`` wrote (or any safetensors file, as a dict of tensors).

    ``weights_only`` (default True) never runs code from the file; ``weights_only=False``
    unpickles arbitrary objects and must only be used on files you trust."""
    if mmap:
        raise RuntimeError("strata.load: mmap=True is not supported; the file is read into "
                           "memory")
    weights_only = True if weights_only is None else weights_only
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    data, name = _read_all(f)
    metadata = _read_header(data, name)
    try:
        raw = deserialize(bytes(data))
    except SafetensorError as e:
        raise _corrupt(name, str(e)) from None
    arrays = {}
    for key, info in raw:
        dtype = _ST_DTYPES.get(info["dtype"])
        if dtype is None:
            raise RuntimeError(f"strata.load: {name}: tensor {key!r} has dtype {info['dtype']}, "
                               f"which strata does not support")
        arrays[key] = np.frombuffer(info["data"], dtype=dtype).reshape(info["shape"])
    if not any(k.startswith("strata.") for k in metadata):  # a plain safetensors file
        move = _map_location(map_location)
        return {key: move(_from_array(a), "cpu") for key, a in arrays.items()}
    kind, expected = metadata.get("strata.kind"), metadata.get("strata.sha256")
    if kind is None or expected is None:
        raise _corrupt(name, "the strata metadata lacks strata.kind or strata.sha256")
    body = metadata.get("strata.structure", "")
    if _checksum(kind, body, arrays) != expected:
        raise _corrupt(name, "the sha256 checksum of the payload does not match the header")
    tensors = _TensorFactory(arrays, _map_location(map_location), name)
    if kind == "structure":
        try:
            return _decode(json.loads(body), tensors)
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            raise _corrupt(name, f"bad structure ({e})") from None
    if kind != "pickle" or _PICKLE_KEY not in arrays:
        raise _corrupt(name, f"unknown strata.kind {kind!r}")
    stream = io.BytesIO(arrays[_PICKLE_KEY].tobytes())
    if weights_only:
        return _RestrictedUnpickler(stream, tensors).load()
    if pickle_module is not None:
        unpickler = pickle_module.Unpickler(stream, **pickle_load_args)
        unpickler.persistent_load = lambda pid: tensors(pid[1])
        return unpickler.load()
    return _FullUnpickler(stream, tensors).load()


class _TensorFactory:
    """Turns a tensor node into a tensor, once per key, so shared tensors stay shared."""

    def __init__(self, arrays, map_location, name):
        self.arrays, self.map_location, self.name = arrays, map_location, name
        self.made = {}

    def __call__(self, node):
        key = node["tensor"]
        made = self.made.get(key)
        if made is not None:
            return made
        if key not in self.arrays or key == _PICKLE_KEY:
            raise _corrupt(self.name, f"the structure refers to a missing tensor {key!r}")
        if node.get("numpy"):
            self.made[key] = self.arrays[key]
            return self.arrays[key]
        t = self.map_location(_from_array(self.arrays[key]), node.get("device", "cpu"))
        requires_grad = bool(node.get("requires_grad", False))
        if node.get("parameter"):
            t = Parameter(t, requires_grad)
        elif requires_grad:
            t.requires_grad_(True)
        self.made[key] = t
        return t
