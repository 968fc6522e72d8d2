"""The OpenCL device's ``embedding``: the gather with its index check in one launch.

Note [Checked gathers]: ``embedding`` must raise ``IndexError: index out of range in self`` for
an index outside the weight's rows. The general path launches the check kernel of
opencl_checks.py, then the gather (two launches per lookup, as many as the op's work). Here one
kernel does both: work-item (p, c) reads index p; where it is out of range, the work-item of
column 0 writes it into the check's slot of the runtime's flag buffer (the same slot, so the
error and its text are the check's: raised at the next sync point, Note [Device-side asserts])
and every work-item of the row reads row 0 instead, so nothing is read outside the weight.
A lookup copies elements unchanged, so the kernel moves them as unsigned integers of the
element's width: one program per width serves every dtype (half, complex, bool). The general
path stays for what this one does not cover: an empty weight or embedding dim (no work-item
would check), index tensors of more than four dims, graphs being recorded for replay (checked
on the host), every flag slot taken.
"""

from ...ops import dense as DN
from .opencl_checks import INDEX_TYPES, RANK, check_indices, device_slot
from .opencl_pointwise import launch, new_output, runtime_of
from .opencl_rows import gather

_EMBEDDING = """__kernel void k_embedding(__global const E* restrict w, const long w_off,
        const long w_st0, const long w_st1, __global const I* restrict idx, const long idx_off,
        const long s1, const long s2, const long s3, const long st0, const long st1,
        const long st2, const long st3, __global E* restrict out, const long out_off,
        const long rows, const long cols, const long n, __global long* restrict flags,
        const long slot) {
    const long x = get_global_id(0);
    if (x >= n) return;
    const long c = x % cols;
    long rest = x / cols;
    const long i3 = rest % s3; rest /= s3;
    const long i2 = rest % s2; rest /= s2;
    const long i1 = rest % s1;
    const long i0 = rest / s1;
    long v = idx[idx_off + i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3];
    if (v < 0 || v >= rows) {
        if (c == 0) {
            flags[2 * slot + 1] = v;
            flags[2 * slot] = 1;
        }
        v = 0;
    }
    out[out_off + x] = w[w_off + v * w_st0 + c * w_st1];
}
"""
_NAMES = ["w", "w_off", "w_st0", "w_st1", "idx", "idx_off", "s1", "s2", "s3", "st0", "st1",
          "st2", "st3", "out", "out_off", "rows", "cols", "n", "flags", "slot"]
_WIDTHS = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong", 16: "ulong2"}
_ERROR = (IndexError, "index out of range in self")      # opencl_checks.py's key for it


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``weight[indices]``, checked and gathered in one launch (Note [Checked gathers])."""
    spec = DN.embedding.meta(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    out = new_output(spec, weight)
    rt = runtime_of(weight)
    rows, cols = weight._shape
    slot = device_slot(indices, *_ERROR) if rows and cols else None
    if slot is None:
        check_indices(indices, rows, *_ERROR)
        return gather("aten::embedding", weight, indices, out, 0)
    n = out.numel()
    if not n:
        return out
    pad = RANK - indices.ndim
    sizes = (1,) * pad + tuple(indices._shape)
    strides = (0,) * pad + tuple(indices._get_strides())
    values = [*rt.buffer_of(weight), *weight._get_strides(), *rt.buffer_of(indices),
              *sizes[1:], *strides, *rt.buffer_of(out), rows, cols, n, rt.asserts.buffer, slot]
    element, index_type = _WIDTHS[weight.dtype.itemsize], INDEX_TYPES[indices.dtype]

    def build():
        return f"#define E {element}\n#define I {index_type}\n" + _EMBEDDING, _NAMES
    launch("aten::embedding", ("embedding_checked", element, index_type), build, values,
           [weight, indices, out], n, rt, names=lambda: _NAMES)
    return out
