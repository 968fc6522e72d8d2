"""The safetensors file layout, written and read without intermediate copies.

An 8-byte little-endian header length, a UTF-8 JSON header ``{name: {"dtype", "shape",
"data_offsets": [begin, end]}, "__metadata__": {str: str}}`` padded with spaces to a multiple
of 8 bytes, then every tensor's raw little-endian, row-major bytes, packed. Tensors are laid out
as the ``safetensors`` library lays them out (by dtype, largest first, then name), so the files
are byte-identical to its own and every reader of the format reads ours.

The ``safetensors`` package builds the whole file in memory (``serialize``), or writes through
its own temp file (``serialize_file``), and its ``deserialize`` copies every tensor: here the
writer streams each array straight to the file and the reader returns views of the one buffer
the file was read into, after the checks the library makes (a header cap, no duplicate keys,
offsets contiguous, non-overlapping, in bounds and equal to shape x item size).
"""

import json
import math

import ml_dtypes
import numpy as np

DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
          "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
          "BOOL": np.bool_}
_NAMES = {np.dtype(d): name for name, d in DTYPES.items()}
SUPPORTED = set(_NAMES)
# safetensors orders tensors by its Dtype enum, largest first, then by name.
_RANK = {name: i for i, name in enumerate(
    ["BOOL", "U8", "I8", "I16", "F16", "BF16", "I32", "F32", "F64", "I64"])}
MAX_HEADER = 100_000_000  # safetensors' own cap


class FormatError(ValueError):
    """The bytes are not a valid safetensors file; the message says why."""


def _layout(arrays):
    """(name, array) pairs in the order safetensors writes them."""
    return sorted(arrays.items(), key=lambda kv: (-_RANK[_NAMES[kv[1].dtype]], kv[0]))


def header_bytes(arrays, metadata):
    header, offset = {}, 0
    if metadata:
        header["__metadata__"] = metadata
    for name, arr in _layout(arrays):
        header[name] = {"dtype": _NAMES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text


def write(f, arrays, metadata):
    """Write ``arrays`` (name -> C-contiguous array of a supported dtype) to binary file ``f``."""
    f.write(header_bytes(arrays, metadata))
    for _, arr in _layout(arrays):
        if arr.nbytes:
            f.write(memoryview(arr.reshape(-1).view(np.uint8)))


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate key in the header: "
                         f"{next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def read(buf):
    """(metadata, {name: array}) from a buffer holding a whole file; arrays are views of it."""
    if len(buf) < 8:
        raise FormatError(f"the file has {len(buf)} bytes, less than the 8-byte header size")
    n = int.from_bytes(buf[:8], "little")
    if n > MAX_HEADER or 8 + n > len(buf):
        raise FormatError(f"the header claims {n} bytes but the file has {len(buf) - 8}")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise FormatError(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise FormatError("the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise FormatError("__metadata__ is not a map of strings to strings")
    data = memoryview(buf)[8 + n:]
    entries = [(name, *_entry(name, info)) for name, info in header.items()]
    end = 0
    for name, dtype, shape, begin, stop in sorted(entries, key=lambda e: (e[3], e[4])):
        if begin != end:
            raise FormatError(f"invalid offset for tensor {name!r}: the data of the tensors "
                              f"must be contiguous and must not overlap")
        if stop - begin != math.prod(shape) * np.dtype(dtype).itemsize:
            raise FormatError(f"tensor {name!r}: {stop - begin} bytes for shape {shape} of "
                              f"{np.dtype(dtype).name}")
        end = stop
    if end != len(data):
        raise FormatError(f"the tensors hold {end} bytes but the file has {len(data)} after "
                          f"the header")
    arrays = {}
    for name, dtype, shape, begin, stop in entries:
        arr = np.frombuffer(data[begin:stop], dtype=dtype).reshape(shape)
        if not arr.flags.aligned:  # a packed layout written by another tool
            arr = arr.copy()
        arrays[name] = arr
    return metadata, arrays


def _entry(name, info):
    if not isinstance(info, dict):
        raise FormatError(f"tensor {name!r}: not a JSON object")
    dtype = DTYPES.get(info.get("dtype"))
    if dtype is None:
        raise FormatError(f"tensor {name!r} has dtype {info.get('dtype')!r}, which strata does "
                          f"not support")
    shape, offsets = info.get("shape"), info.get("data_offsets")
    if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
        raise FormatError(f"tensor {name!r}: bad shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2
            and all(type(o) is int and o >= 0 for o in offsets) and offsets[0] <= offsets[1]):
        raise FormatError(f"tensor {name!r}: bad data_offsets {offsets!r}")
    return dtype, tuple(shape), offsets[0], offsets[1]
