"""PyTorch's checkpoint format (``torch.save``'s zip file), read and written without torch.

A zip archive, stored (not compressed), every record under one top folder:
``<top>/data.pkl`` (a pickle of the object; each tensor is a call of
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` whose
storage is a persistent id ``("storage", torch.FloatStorage, "<key>", "cpu", numel)``),
``<top>/data/<key>`` (each storage's raw little-endian bytes), ``<top>/byteorder``,
``<top>/version`` and ``<top>/.format_version``. Records are padded so data starts on a
64-byte boundary, as PyTorch does (``torch.load(mmap=True)`` needs it).

Reading runs ``data.pkl`` through the weights-only unpickler with the names a ``torch.save`` of
a state dict uses (the rebuild functions, storage types, dtypes, ``torch.device``, ``torch.Size``)
mapped to strata's own; anything else is refused. The zip's CRC of every record is checked, and
every tensor's extent is checked against its storage before a view is made.
"""

import io
import math
import pickle
import zipfile
import zlib
from collections import Counter, OrderedDict
from typing import ClassVar

import numpy as np

from .._tensor import Tensor, from_array
from ..core import dtype as D
from ..core.device import device as Device
from ..core.shape import Size
from ..nn.parameter import Parameter
from ._weights_only import COMMON_SAFE, RestrictedUnpickler, refusal

ZIP_MAGIC = b"PK\x03\x04"
_ALIGNMENT = 64
_STORAGE_NAMES = {"float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                  "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
                  "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
                  "complex128": "ComplexDoubleStorage"}


class NotTorchSerializable(Exception):
    """The object holds something ``torch.load(weights_only=True)`` could not read."""


# --- writing ------------------------------------------------------------------------------------

class _TorchName:
    """A global in torch's namespace, pickled by name (strata has no such object to import)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's reduce requires a callable; only its name is written
        raise TypeError(f"{self.module}.{self.name} exists only in torch")


class _StorageRef:
    def __init__(self, key, array):
        self.key, self.array = key, array


class _PlainTensor:
    """A Parameter's data: rebuilt as a plain tensor inside ``_rebuild_parameter``."""

    def __init__(self, tensor):
        self.tensor = tensor


_PLAIN_TYPES = {type(None), bool, int, float, complex, str, bytes, dict, list, tuple, set,
                frozenset, OrderedDict, Counter, _TorchName, D.dtype}
_PLAIN_CLASSES = (OrderedDict, Counter, set, frozenset, complex)  # pickled by their names
_REBUILD_V2 = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")


class _TorchPickler(pickle._Pickler):
    """Pickles a state-dict-like tree as ``torch.save`` would; tensors' data goes to
    ``self.storages`` (key -> contiguous array), once per tensor object."""

    dispatch: ClassVar[dict] = dict(pickle._Pickler.dispatch)

    def __init__(self, file, to_array):
        super().__init__(file, protocol=2)
        self.to_array = to_array
        self.storages = {}
        self._keys = {}   # id(tensor) -> storage ref
        self._alive = []  # keep tensors alive so ids stay unique while saving

    def _write_global(self, module, name, obj):
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def _save_torch_name(self, obj):
        self._write_global(obj.module, obj.name, obj)

    def _save_dtype(self, obj):
        self._write_global("torch", obj.name, obj)

    dispatch[_TorchName] = _save_torch_name
    dispatch[D.dtype] = _save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            storage_type = _TorchName("torch", _STORAGE_NAMES[D.from_numpy_dtype(
                obj.array.dtype).name])
            return ("storage", storage_type, obj.key, "cpu", obj.array.size)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, _PlainTensor):
            return self._rebuild(obj.tensor, requires_grad=False)  # as Parameter.data is
        if isinstance(obj, Parameter):
            return (_REBUILD_PARAMETER, (_PlainTensor(obj), obj.requires_grad, OrderedDict()))
        if isinstance(obj, Tensor):
            return self._rebuild(obj)
        if isinstance(obj, Device):
            return (_TorchName("torch", "device"), (str(obj),))
        if isinstance(obj, Size):
            return (_TorchName("torch", "Size"), (tuple(obj),))
        if type(obj) in _PLAIN_TYPES or any(obj is c for c in _PLAIN_CLASSES):
            return NotImplemented
        raise NotTorchSerializable(type(obj).__name__)

    def _rebuild(self, t, requires_grad=None):
        ref = self._keys.get(id(t))
        if ref is None:
            arr = self.to_array(t)
            if arr.dtype not in _NP_TO_STORAGE_OK:
                raise NotTorchSerializable(str(t.dtype))
            ref = self._keys[id(t)] = _StorageRef(str(len(self.storages)), arr)
            self.storages[ref.key] = arr
            self._alive.append(t)
        shape = tuple(t.shape)
        strides = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
        if requires_grad is None:
            requires_grad = t.requires_grad
        return (_REBUILD_V2, (ref, 0, shape, strides, requires_grad, OrderedDict()))


_NP_TO_STORAGE_OK = {d.np for d in D.ALL_DTYPES if d.name in _STORAGE_NAMES}


def pickle_state(obj, to_array):
    """(data.pkl bytes, {storage key: array}) for ``obj``. Raises NotTorchSerializable if
    ``obj`` holds what ``torch.load`` could not read."""
    buffer = io.BytesIO()
    pickler = _TorchPickler(buffer, to_array)
    pickler.dump(obj)
    return buffer.getvalue(), pickler.storages


def write(f, pickled, storages, archive_name="archive"):
    """Write what ``pickle_state`` made to binary file ``f`` as a zip archive."""
    records = [("data.pkl", pickled), (".format_version", b"1"),
               (".storage_alignment", str(_ALIGNMENT).encode()), ("byteorder", b"little")]
    records += [(f"data/{key}", arr) for key, arr in storages.items()]
    records += [("version", b"3\n")]
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
        for name, data in records:
            _write_aligned(archive, f"{archive_name}/{name}", data)


def _write_aligned(archive, name, data):
    view = memoryview(data.reshape(-1).view(np.uint8) if isinstance(data, np.ndarray) else data)
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = view.nbytes
    info.CRC = info.compress_size = 0  # for FileHeader below; zipfile fills them in on close
    zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
    offset = archive.fp.tell()
    # The local header is 30 bytes + name + extra (+ 20 for zip64); pad the extra with an
    # "FB" field (PyTorch's) so the data starts on an aligned offset.
    base = len(info.FileHeader(zip64))
    pad = -(offset + base + 4) % _ALIGNMENT
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    with archive.open(info, "w", force_zip64=zip64) as out:
        out.write(view)


# --- reading ------------------------------------------------------------------------------------

class _BufferReader(io.RawIOBase):
    """A seekable read-only file over a buffer, without copying it (for ``zipfile``)."""

    def __init__(self, buf):
        self._view, self._pos = memoryview(buf), 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, pos, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(base + pos, 0)
        return self._pos

    def readinto(self, b):
        chunk = self._view[self._pos:self._pos + len(b)]
        b[:len(chunk)] = chunk
        self._pos += len(chunk)
        return len(chunk)


class StorageType:
    """``torch.FloatStorage`` and its kin, as named in a pickle: the element type."""

    def __init__(self, np_dtype):
        self.np_dtype = np_dtype


class _Storage:
    def __init__(self, array, location):
        self.array, self.location = array, location


def _records(buf):
    """{record name without the top folder: memoryview of its data}, CRC-checked."""
    try:
        archive = zipfile.ZipFile(_BufferReader(buf))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise ValueError(f"a broken zip archive ({e})") from None
    view, records = memoryview(buf), {}
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED:
            raise ValueError(f"record {info.filename!r} is compressed; torch.save never "
                             f"compresses")
        header = bytes(view[info.header_offset:info.header_offset + 30])
        if len(header) < 30 or header[:4] != ZIP_MAGIC:
            raise ValueError(f"record {info.filename!r}: bad local header")
        start = (info.header_offset + 30 + int.from_bytes(header[26:28], "little")
                 + int.from_bytes(header[28:30], "little"))
        data = view[start:start + info.file_size]
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise ValueError(f"record {info.filename!r} fails its CRC check")
        records[info.filename.split("/", 1)[-1]] = data
    return records


def read(buf, map_location, weights_only):
    """The object a ``torch.save`` zip file in ``buf`` holds, tensors as views of ``buf``."""
    records = _records(buf)
    if "data.pkl" not in records:
        raise ValueError("no data.pkl record")
    byteorder = bytes(records.get("byteorder", b"little"))
    if byteorder not in (b"little", b"big"):
        raise ValueError(f"unknown byteorder {byteorder!r}")
    return unpickle(records["data.pkl"], lambda key: records.get(f"data/{key}"), map_location,
                    weights_only, big_endian=byteorder == b"big")


def storage_id(pid):
    """(storage type, key, location, numel) of a persistent id. The legacy format's ids have a
    sixth item, view metadata, which PyTorch has written as None since storages became untyped."""
    if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"
            and isinstance(pid[1], StorageType) and isinstance(pid[2], str)
            and isinstance(pid[3], str) and type(pid[4]) is int and pid[4] >= 0
            and (len(pid) == 5 or pid[5] is None)):
        raise refusal(f"unsupported persistent id {pid!r}")
    return pid[1], pid[2], pid[3], pid[4]


def unpickle(pickled, storage_bytes, map_location, weights_only, big_endian=False):
    """Run a torch pickle; ``storage_bytes(key)`` is the raw data of storage ``key`` (or None)."""

    def storage(pid):
        storage_type, key, location, numel = storage_id(pid)
        data = storage_bytes(key)
        dtype = np.dtype(storage_type.np_dtype)
        if data is None or len(data) != numel * dtype.itemsize:
            raise ValueError(f"storage {key!r} is missing or has the wrong size")
        if big_endian:
            array = np.frombuffer(data, dtype.newbyteorder(">")).astype(dtype)
        else:
            array = np.frombuffer(data, dtype)
        return _Storage(array, location)

    def rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None,
                       metadata=None):
        t = map_location(from_array(_tensor_array(storage, offset, size, stride)),
                         storage.location)
        return t.requires_grad_(True) if requires_grad else t

    def rebuild_parameter(data, requires_grad, hooks, state=None):
        return Parameter(data, requires_grad)

    allowed = {**COMMON_SAFE, **TORCH_NAMES,
               "torch._utils._rebuild_tensor_v2": rebuild_tensor,
               "torch._utils._rebuild_tensor": rebuild_tensor,
               "torch._utils._rebuild_parameter": rebuild_parameter,
               "torch._utils._rebuild_parameter_with_state": rebuild_parameter,
               "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2}
    stream = io.BytesIO(pickled)
    if weights_only:
        return RestrictedUnpickler(stream, allowed, storage).load()
    return _FullTorchUnpickler(stream, allowed, storage).load()


class _FullTorchUnpickler(pickle.Unpickler):
    """``weights_only=False``: torch's names mapped to strata's, any other global imported."""

    def __init__(self, file, allowed, persistent_load):
        super().__init__(file)
        self._allowed, self.persistent_load = allowed, persistent_load

    def find_class(self, module, name):
        return self._allowed.get(f"{module}.{name}") or super().find_class(module, name)


def _rebuild_from_type_v2(func, new_type, args, state):
    """Tensor subclasses: only plain tensors and Parameters, without extra state."""
    if new_type not in (Tensor, Parameter) or state:
        raise refusal(f"tensor subclass {getattr(new_type, '__name__', new_type)!r} with "
                      f"state {state!r} is not supported")
    result = func(*args)
    return Parameter(result, result.requires_grad) if new_type is Parameter else result


def _tensor_array(storage, offset, size, stride):
    """The tensor's elements: a view of the storage when they fill it in order, else a copy;
    the extent is checked first, so a hostile file cannot read outside the storage."""
    if not isinstance(storage, _Storage):
        raise refusal(f"a tensor over {type(storage).__name__}, not a storage")
    ints = (offset, *size, *stride)
    if not (all(type(v) is int and v >= 0 for v in ints) and len(size) == len(stride)):
        raise ValueError(f"bad tensor geometry: offset {offset}, size {size}, stride {stride}")
    array = storage.array
    numel = math.prod(size)
    if numel and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= array.size:
        raise ValueError(f"a tensor of size {tuple(size)} and stride {tuple(stride)} at offset "
                         f"{offset} reaches past its storage of {array.size} elements")
    contiguous = all(s == math.prod(size[i + 1:]) for i, (n, s) in enumerate(zip(size, stride))
                     if n > 1)
    if contiguous:
        out = array[offset:offset + numel].reshape(size)
    else:
        out = np.lib.stride_tricks.as_strided(
            array[offset:], shape=size, strides=[s * array.itemsize for s in stride]).copy()
    return out if out.flags.writeable else out.copy()


TORCH_NAMES = {
    **{f"torch.{name}": StorageType(D._by_name(dtype).np) for dtype, name in
       _STORAGE_NAMES.items()},
    **{f"torch.{d.name}": d for d in D.ALL_DTYPES},
    "torch.device": Device, "torch.Size": Size, "torch.Tensor": Tensor,
    "torch.nn.parameter.Parameter": Parameter,
}
