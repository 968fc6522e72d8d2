"""PyTorch's legacy checkpoint format (before 1.6, or ``_use_new_zipfile_serialization=False``),
read only.

The file is five pickles in a row, then raw storages: a magic number, the protocol version
(1001), a ``sys_info`` dict (byte order, C type sizes), the object (tensors refer to storages by
persistent ids ``("storage", torch.FloatStorage, "<key>", "cpu", numel, None)``), and the sorted
list of storage keys. Each storage follows as an 8-byte little-endian element count and its raw
bytes, in that order.

Nothing in the file is executed to find its parts. ``pickletools.genops`` walks the opcodes to
find where each pickle ends. The object pickle is first run with rebuild functions that build
nothing, only to learn each storage's element type (and so its byte length). It is then run again
by the weights-only unpickler, with every storage a view of the buffer.
"""

import io
import pickle
import pickletools

from ._torch_format import TORCH_NAMES, _BufferReader, storage_id, unpickle
from ._weights_only import COMMON_SAFE, RestrictedUnpickler, refusal

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def is_legacy(buf):
    """True for a file whose first pickle is PyTorch's magic number (any pickle protocol >= 2)."""
    return (len(buf) >= 14 and buf[0] == pickle.PROTO[0] and bytes(buf[2:4]) == b"\x8a\x0a"
            and int.from_bytes(buf[4:14], "little") == MAGIC_NUMBER)


def _pickle_end(buf, start):
    """Where the pickle starting at ``start`` ends (after its STOP), found without running it."""
    reader = _BufferReader(buf)
    reader.seek(start)
    for opcode, _, pos in pickletools.genops(reader):  # pos: the opcode's offset in buf
        if opcode.name == "STOP":
            return pos + 1
    raise ValueError("a pickle without a STOP opcode")


def _plain(buf, start):
    """A header pickle (ints, dicts, lists of str), run with no globals allowed."""
    end = _pickle_end(buf, start)
    value = RestrictedUnpickler(io.BytesIO(bytes(buf[start:end])), {}, _no_storage).load()
    return value, end


def _no_storage(pid):
    raise refusal(f"unsupported persistent id {pid!r}")


def _storage_types(pickled):
    """{key: storage type} of the object pickle, from a run whose rebuild functions build
    nothing (the same allow-list: a refused name is refused here first)."""
    types = {}

    def record(pid):
        storage_type, key, _, _ = storage_id(pid)
        types[key] = storage_type

    def nothing(*args, **kwargs):
        return None

    allowed = {**COMMON_SAFE, **TORCH_NAMES,
               **{f"torch._utils.{name}": nothing for name in (
                   "_rebuild_tensor_v2", "_rebuild_tensor", "_rebuild_parameter",
                   "_rebuild_parameter_with_state")},
               "torch._tensor._rebuild_from_type_v2": nothing}
    RestrictedUnpickler(io.BytesIO(pickled), allowed, record).load()
    return types


def read(buf, map_location, weights_only):
    """The object a legacy ``torch.save`` file in ``buf`` holds, tensors as views of ``buf``."""
    magic, pos = _plain(buf, 0)
    protocol, pos = _plain(buf, pos)
    sys_info, pos = _plain(buf, pos)
    if magic != MAGIC_NUMBER or protocol != PROTOCOL_VERSION:
        raise ValueError(f"unknown legacy format (magic {magic!r}, protocol {protocol!r})")
    if not (isinstance(sys_info, dict) and sys_info.get("little_endian") is True):
        raise ValueError(f"only little-endian legacy files are supported (sys_info {sys_info!r})")
    object_end = _pickle_end(buf, pos)
    pickled = bytes(buf[pos:object_end])
    keys, pos = _plain(buf, object_end)
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise ValueError("the storage key list is not a list of strings")
    types = _storage_types(pickled)
    storages = {}
    for key in keys:
        if key not in types:
            raise ValueError(f"storage {key!r} is listed but never used")
        numel = int.from_bytes(buf[pos:pos + 8], "little", signed=True)
        nbytes = numel * types[key].np_dtype.itemsize
        if numel < 0 or pos + 8 + nbytes > len(buf):
            raise ValueError(f"storage {key!r} claims {numel} elements past the end of the file")
        storages[key] = buf[pos + 8:pos + 8 + nbytes]
        pos += 8 + nbytes
    return unpickle(pickled, storages.get, map_location, weights_only)
