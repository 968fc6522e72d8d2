"""The device-side index check of the OpenCL device (backends/opencl/asserts.py's Note
[Device-side asserts]): one work-item per index, each out-of-range one written to its error's
slot of the runtime's flag buffer. Written by hand like the fused optimizer updates: it is one
comparison and a store, for index tensors of up to four dims with any strides.
"""

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from .opencl_pointwise import all_contiguous, identity, launch, pointwise, runtime_of

_CHECK = """__kernel void k_check_index(__global const T* restrict idx, const long idx_off,
                            const long s1, const long s2, const long s3,
                            const long st0, const long st1, const long st2, const long st3,
                            const long n, const long low, const long high, const long ignore,
                            const long has_ignore, __global long* restrict flags,
                            const long slot) {
    const long x = get_global_id(0);
    if (x >= n) return;
    long rest = x;
    const long i3 = rest % s3; rest /= s3;
    const long i2 = rest % s2; rest /= s2;
    const long i1 = rest % s1;
    const long i0 = rest / s1;
    const long v = idx[idx_off + i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3];
    if ((v < low || v >= high) && !(has_ignore && v == ignore)) {
        flags[2 * slot + 1] = v;
        flags[2 * slot] = 1;
    }
}
"""
_NAMES = ["idx", "idx_off", "s1", "s2", "s3", "st0", "st1", "st2", "st3", "n", "low", "high",
          "ignore", "has_ignore", "flags", "slot"]
INDEX_TYPES = {D.int64: "long", D.int32: "int"}
RANK = 4


def check_indices(index, high, error, text, ignore=None):
    """Raise ``error(text.format(bad))`` for an index ``bad`` of ``index`` outside ``0 <= bad <
    high`` (``ignore`` aside): checked on the device, the error raised at the next sync point
    (Note [Device-side asserts]), or on the host at once where the device cannot: more than
    four dims, every flag slot taken."""
    if not _on_device(index, high, (error, text), ignore):
        flat = host_indices(index).reshape(-1)
        bad = (flat < 0) | (flat >= high)
        if ignore is not None:
            bad &= flat != ignore
        if bad.any():
            raise error(text.format(flat[np.argmax(bad)]))


def device_slot(index, error, text):
    """The flag slot for ``error(text.format(bad))`` of a check of ``index`` launched now on the
    current stream (or recorded for replay), or None where the device cannot check: more than
    four dims, an index dtype without a kernel, every slot taken."""
    rt = runtime_of(index)
    if index.ndim > RANK or index.dtype not in INDEX_TYPES:
        return None
    return rt.asserts.slot((error, text), lambda bad: error(text.format(bad)),
                           rt.current_stream())


def _on_device(index, high, key, ignore):
    """Launch the check kernel on the current stream; False where the device cannot check."""
    if not index.numel():
        return True
    slot = device_slot(index, *key)
    if slot is None:
        return False
    rt, ctype, n = runtime_of(index), INDEX_TYPES[index.dtype], index.numel()
    pad = RANK - index.ndim
    sizes = (1,) * pad + tuple(index._shape)
    strides = (0,) * pad + tuple(index._get_strides())
    buffer, offset = rt.buffer_of(index)
    values = [buffer, offset, *sizes[1:], *strides, n, 0, high,
              0 if ignore is None else ignore, int(ignore is not None), rt.asserts.buffer, slot]

    def build():
        return f"#define T {ctype}\n" + _CHECK, _NAMES
    launch("check_index", ("check_index", ctype), build, values, [index], n, rt,
           names=lambda: _NAMES)
    return True


def host_indices(index):
    """The index values, read on the host (a sync point)."""
    host = np.empty(index._shape, index.dtype.np)
    runtime_of(index).download(host, index if all_contiguous((), index) else pointwise(
        "aten::copy_", identity, [(index, index.dtype)],
        runtime_of(index).empty(tuple(index._shape), contiguous_strides(index._shape),
                                index.dtype)))
    return host


# Note [Checks in the first work-item]: a kernel whose every work-item already loops over a
# 1-D index buffer (``index_add_``'s, one reduction over the positions per element) checks it in
# the same launch: its work-item 0 also walks the indices once and writes the first one out of
# range into the check's slot (so the error is the check kernel's, raised at the next sync
# point, with the first bad index as the host check would name it). The kernel must read
# nothing outside its buffers for a bad index meanwhile; ``index_add_``'s also writes nothing
# then (each element's work-item sees every index, so it keeps its old value), so the tensor
# is left as it was, as the CPU leaves it when it raises.
_FIRST_ITEM = """    if (x == 0) {{
        for (long p = 0; p < {n}; ++p) {{
            const long v = {index}[{index}_off + p * {index}_st0];
            if (v < 0 || v >= check_high) {{
                flags[2 * check_slot + 1] = v;
                flags[2 * check_slot] = 1;
                break;
            }}
        }}
    }}
"""
CHECK_NAMES = ["check_high", "flags", "check_slot"]
_HEAD_END = ") {\n    const long x = get_global_id(0);\n"


def with_first_item_check(printed, index, n):
    """``printed`` (source, parameter names) of a printed kernel, its work-item 0 also checking
    the ``n`` values of its 1-D index buffer named ``index`` (Note [Checks in the first
    work-item]); the launch passes ``CHECK_NAMES``' values: the bound, the flag buffer, the
    slot of ``device_slot``."""
    source, names = printed
    head, found, body = source.partition(_HEAD_END)
    if not found:
        raise RuntimeError("OpenCL: a printed kernel without the printer's head")
    params = ", const long check_high, __global long* restrict flags, const long check_slot"
    return (head + params + found + _FIRST_ITEM.format(n=n, index=index) + body,
            [*names, *CHECK_NAMES])
