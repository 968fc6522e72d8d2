"""Checkpoints: ``strata.save`` / ``strata.load``. Loading runs no code from the file.

Two file formats, chosen by the path's extension when saving and by the file's first bytes when
loading (docs/checkpoints.md):

* **PyTorch's zip format** (``.pt``, ``.pth``, ``.pt.tar``, ``.pth.tar`` paths, see
  ``_torch_format``): what ``torch.save`` writes, so ``torch.load`` (``weights_only=True``)
  reads strata's checkpoints and strata reads PyTorch's. Used when the object is a
  state-dict-like tree (containers, plain values, dtypes, devices, tensors); anything else falls
  back to the safetensors format.
* **safetensors** (every other path, and file objects; see ``_safetensors``): every tensor's
  data is a safetensors tensor and the ``__metadata__`` header says what the file holds
  (``strata.kind``): ``structure`` -- a state-dict-like tree as JSON (``_structure``); a flat dict
  of tensors keeps its keys as tensor names, so ``safetensors.torch.load_file`` reads it too --
  or ``pickle`` -- any other object, pickled with every tensor's data kept out of the pickle.
  ``strata.crc32`` checksums names, dtypes, shapes, bytes and the structure, so a flipped bit is
  an error, not a silently wrong weight (files of strata <= 0.1 carry ``strata.sha256``).

Every pickle is read by the weights-only unpickler (``_weights_only``) unless the caller passes
``weights_only=False``, which is an explicit opt-in, never a fallback: "models are programs".
Saving to a path is atomic (``_files``): an interrupted or concurrent save never leaves a broken
file. ``load`` reads the file into one buffer (or maps it: ``mmap=True``) and builds tensors as
views of it.

    strata.save(model.state_dict(), "ckpt.pt")
    model.load_state_dict(strata.load("ckpt.pt"))
"""

import copyreg
import hashlib
import io
import json
import os
import pickle
import zlib

import numpy as np

from .._tensor import Tensor, from_array
from ..core import dtype as D
from ..core.device import as_device
from ..nn.parameter import Parameter
from . import _safetensors, _torch_format, _torch_legacy
from ._files import atomic_writer, read_into_buffer
from ._structure import PICKLE_KEY, NotPlain, TensorTable, c_order, decode, encode, tensor_node
from ._structure import to_array as _to_array
from ._weights_only import (
    COMMON_SAFE,
    STRATA_SAFE,
    RestrictedUnpickler,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    is_refusal,
    refusal,
    safe_globals,
)

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

FORMAT_VERSION = "2"
TORCH_EXTENSIONS = (".pt", ".pth", ".pt.tar", ".pth.tar")   # .pth.tar: PyTorch's ImageNet example


# --- tensors pickled by value (multiprocessing, deepcopy, user pickles) --------------------------

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


# Registered here rather than in _tensor.py, which sits below this layer.
copyreg.pickle(Tensor, _reduce_tensor)


# --- the safetensors format's pickle mode --------------------------------------------------------

class _TensorPickler(pickle.Pickler):
    """Pickles an object graph; each tensor becomes a reference to a safetensors key."""

    def __init__(self, file, protocol, table):
        super().__init__(file, protocol)
        self.table = table

    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            return ("tensor", tensor_node(self.table, obj, str(len(self.table.arrays))))
        return None


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global, as plain pickle (only for trusted files)."""

    def __init__(self, file, tensors):
        super().__init__(file)
        self._tensors = tensors

    def persistent_load(self, pid):
        return self._tensors(pid[1])


def _checksum(kind, body, arrays, algorithm="crc32"):
    """The checksum of a safetensors-format checkpoint: crc32 (fast enough to keep saving at
    disk speed) or, for files of strata <= 0.1, sha256."""
    parts = [kind.encode(), body.encode()]
    for key in sorted(arrays):
        arr = arrays[key]
        parts.append(f"\0{key}\0{arr.dtype.name}\0{list(arr.shape)}\0".encode())
        parts.append(c_order(arr).reshape(-1).view(np.uint8))
    if algorithm == "sha256":
        h = hashlib.sha256()
        for part in parts:
            h.update(part)
        return h.hexdigest()
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    return f"{crc:08x}"


# --- save ---------------------------------------------------------------------------------------

def _safetensors_payload(obj, pickle_protocol):
    """(arrays, metadata) of ``obj`` in the safetensors format."""
    table = TensorTable()
    try:
        structure = encode(obj, table, "")
        kind, body = "structure", json.dumps(structure, separators=(",", ":"), allow_nan=False)
    except NotPlain:
        table = TensorTable()
        buffer = io.BytesIO()
        _TensorPickler(buffer, max(2, pickle_protocol), table).dump(obj)
        table.arrays[PICKLE_KEY] = np.frombuffer(buffer.getvalue(), dtype=np.uint8)
        kind, body = "pickle", ""
    metadata = {"format": "pt", "strata.version": FORMAT_VERSION, "strata.kind": kind,
                "strata.crc32": _checksum(kind, body, table.arrays)}
    if kind == "structure":
        metadata["strata.structure"] = body
    return table.arrays, metadata


def _torch_archive_name(path):
    name = os.path.basename(os.fspath(path))
    for ext in TORCH_EXTENSIONS:
        if name.endswith(ext):
            return name[:-len(ext)] or "archive"
    return "archive"


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a path or a binary file object); see the module docstring for
    the format. Saving to a path is atomic."""
    is_path = isinstance(f, (str, os.PathLike))
    if is_path and os.fspath(f).endswith(TORCH_EXTENSIONS):
        try:
            pickled, storages = _torch_format.pickle_state(obj, _to_array)
        except _torch_format.NotTorchSerializable:
            pass  # torch.load could not read it anyway: use the safetensors format
        else:
            with atomic_writer(os.fspath(f)) as out:
                _torch_format.write(out, pickled, storages, _torch_archive_name(f))
            return
    arrays, metadata = _safetensors_payload(obj, pickle_protocol)
    if is_path:
        with atomic_writer(os.fspath(f)) as out:
            _safetensors.write(out, arrays, metadata)
    else:
        _safetensors.write(f, arrays, metadata)


# --- load ---------------------------------------------------------------------------------------

def _corrupt(name, what):
    return RuntimeError(f"strata.load: {name} is not a valid checkpoint: {what} (the file is "
                        f"truncated or corrupted, or was not written by strata.save, torch.save "
                        f"or safetensors)")


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
    """Load what ``save`` or ``torch.save`` wrote (or any safetensors file, as a dict of
    tensors).

    ``weights_only`` (default True) never runs code from the file; ``weights_only=False``
    unpickles arbitrary objects and must only be used on files you trust. ``mmap=True`` maps the
    file copy-on-write instead of reading it (``f`` must then be a path)."""
    weights_only = True if weights_only is None else weights_only
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    data, name = read_into_buffer(f, use_mmap=bool(mmap))
    move = _map_location(map_location)
    torch_reader = (_torch_format.read if data[:4] == _torch_format.ZIP_MAGIC
                    else _torch_legacy.read if _torch_legacy.is_legacy(data) else None)
    if torch_reader is not None:
        try:
            return torch_reader(data, move, weights_only)
        except (ValueError, KeyError, TypeError, IndexError, EOFError,
                pickle.UnpicklingError) as e:
            if is_refusal(e):
                raise
            raise _corrupt(name, f"{type(e).__name__}: {e}") from None
    try:
        metadata, arrays = _safetensors.read(data)
    except _safetensors.FormatError as e:
        raise _corrupt(name, str(e)) from None
    if not any(k.startswith("strata.") for k in metadata):  # a plain safetensors file
        return {key: move(from_array(a), "cpu") for key, a in arrays.items()}
    _verify(name, metadata, arrays)
    tensors = _TensorFactory(arrays, move, name)
    kind, body = metadata["strata.kind"], metadata.get("strata.structure", "")
    if kind == "structure":
        try:
            return decode(json.loads(body), tensors)
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            raise _corrupt(name, f"bad structure ({e})") from None
    if kind != "pickle" or PICKLE_KEY not in arrays:
        raise _corrupt(name, f"unknown strata.kind {kind!r}")
    stream = io.BytesIO(arrays[PICKLE_KEY])
    if weights_only:
        return RestrictedUnpickler(stream, {**COMMON_SAFE, **STRATA_SAFE},
                                   _tensor_persistent_load(tensors)).load()
    if pickle_module is not None:
        unpickler = pickle_module.Unpickler(stream, **pickle_load_args)
        unpickler.persistent_load = lambda pid: tensors(pid[1])
        return unpickler.load()
    return _FullUnpickler(stream, tensors).load()


def _verify(name, metadata, arrays):
    kind = metadata.get("strata.kind")
    for algorithm in ("crc32", "sha256"):
        expected = metadata.get(f"strata.{algorithm}")
        if kind is not None and expected is not None:
            body = metadata.get("strata.structure", "")
            if _checksum(kind, body, arrays, algorithm) != expected:
                raise _corrupt(name, f"the {algorithm} checksum of the payload does not match "
                                     f"the header")
            return
    raise _corrupt(name, "the strata metadata lacks strata.kind or its checksum")


def _tensor_persistent_load(tensors):
    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor"
                and isinstance(pid[1], dict)):
            raise refusal(f"unsupported persistent id {pid!r}")
        return tensors(pid[1])
    return persistent_load


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
        if key not in self.arrays or key == PICKLE_KEY:
            raise _corrupt(self.name, f"the structure refers to a missing tensor {key!r}")
        if node.get("numpy"):
            self.made[key] = self.arrays[key]
            return self.arrays[key]
        t = self.map_location(from_array(self.arrays[key]), node.get("device", "cpu"))
        requires_grad = bool(node.get("requires_grad", False))
        if node.get("parameter"):
            t = Parameter(t, requires_grad)
        elif requires_grad:
            t.requires_grad_(True)
        self.made[key] = t
        return t
