"""The OpenCL device's ``embedding`` (and ``index_select`` of rows): the gather with its index
check in one launch, its
backward, ``embedding_dense_backward``, in one launch (no zero fill), and ``embedding_renorm_``
(``max_norm``) in one launch.

Note [Checked gathers]: ``embedding`` must raise ``IndexError: index out of range in self`` for
an index outside the weight's rows. The general path launches the check kernel of
opencl_checks.py, then the gather (two launches per lookup, as many as the op's work). Here one
kernel does both: work-item (p, c) reads index p; where it is out of range, the work-item of
column 0 writes it into the check's slot of the runtime's flag buffer (the same slot, so the
error and its text are the check's: raised at the next sync point, Note [Device-side asserts])
and every work-item of the row reads row 0 instead, so nothing is read outside the weight.
A lookup copies elements unchanged, so the kernel moves them as unsigned integers of the
element's width: one program per width serves every dtype (half, complex, bool). ``index_select``
of a vector's elements or a matrix's rows is the same gather with its own error. The general
path (a check kernel, then the gather) stays for what this one does not cover: other dims, an
empty weight or embedding dim (no work-item would check), index tensors of more than four
dims, every flag slot taken.
"""

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import dense as DN
from ...ops import scatter as SC
from ...ops.meta_rules import type_name
from .oclprinter import BUFFER_TYPES, FP64, load_expr, store_statement, with_helpers
from .opencl_checks import INDEX_TYPES, RANK, check_indices, device_slot
from .opencl_pointwise import kernel_name, launch, new_output, runtime_of
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
    if not checked_rows("aten::embedding", weight, indices, out, _ERROR):
        check_indices(indices, weight._shape[0], *_ERROR)
        gather("aten::embedding", weight, indices, out, 0)
    return out


def index_select(self, dim, index):
    """Rows of a matrix or elements of a vector (``dim`` 0) in one launch, as ``embedding``;
    other dims check their indices first (a kernel), then gather."""
    spec = SC.index_select.meta(self, dim, index)
    out = new_output(spec, self)
    d = dim % self.ndim if self.ndim else 0
    size = self._shape[d] if self.ndim else 1
    # ATen checks rows (dim 0) as embedding does, other dims in its gather (the CPU device's)
    error = _ERROR if d == 0 else \
        (RuntimeError, f"INDICES element is out of DATA bounds, id={{}} axis_dim={size}")
    if self.ndim in (1, 2) and d == 0 and self.numel():
        rows = self if self.ndim == 2 else self.unsqueeze(1)
        if checked_rows("aten::index_select", rows, index, out.view(-1, rows._shape[1]),
                        error):
            return out
    check_indices(index, size, *error)
    return gather("aten::index_select", self, index.reshape(-1) if index.ndim == 0 else index,
                  out, d)


def checked_rows(op_name, weight, indices, out, error):
    """``out = weight[indices]`` (``weight`` 2-D, ``out`` contiguous (positions, cols)), with
    the indices checked in the same launch (Note [Checked gathers]) against ``error``; False
    where this kernel does not serve (nothing is enqueued then)."""
    rt = runtime_of(weight)
    rows, cols = weight._shape
    slot = device_slot(indices, *error) if rows and cols else None
    if slot is None:
        return False
    n = out.numel()
    if not n:
        return True
    pad = RANK - indices.ndim
    sizes = (1,) * pad + tuple(indices._shape)
    strides = (0,) * pad + tuple(indices._get_strides())
    values = [*rt.buffer_of(weight), *weight._get_strides(), *rt.buffer_of(indices),
              *sizes[1:], *strides, *rt.buffer_of(out), rows, cols, n, rt.asserts.buffer, slot]
    element, index_type = _WIDTHS[weight.dtype.itemsize], INDEX_TYPES[indices.dtype]

    def build():
        source = _EMBEDDING.replace("k_embedding", kernel_name(op_name))
        return f"#define E {element}\n#define I {index_type}\n" + source, _NAMES
    launch(op_name, (op_name, "checked_rows", element, index_type), build, values,
           [weight, indices, out], n, rt, names=lambda: _NAMES)
    return True


# Note [Embedding backward in one launch]: ``embedding_dense_backward`` writes every element of
# the weight gradient once, with no zero fill first and no atomics: work-item (r, c) sums
# ``grad[p, c]`` over the positions p whose index is r (none for padding_idx's row), in the
# positions' order, each term times 1 / count(r) under scale_grad_by_freq (ATen's CPU kernel's
# ``scale``), accumulating in float for half dtypes. rows x cols x positions work, as the
# general ``index_add_`` (three launches before: the fill, the index check, the sums). The
# indices were checked by the forward; a bad one matches no row.
_BACKWARD = """__kernel void k_embedding_dense_backward(
        __global const G* restrict g, const long g_off, const long g_st0, const long g_st1,
        const long g_st2, const long g_st3, const long g_stc,
        __global const I* restrict idx, const long idx_off, const long st0, const long st1,
        const long st2, const long st3, const long s1, const long s2, const long s3,
        __global G* restrict out, const long out_off, const long rows, const long cols,
        const long positions, const long padding_idx, const long scale_by_freq) {
    const long x = get_global_id(0);
    if (x >= rows * cols) return;
    const long r = x / cols, c = x % cols;
    C total = 0;
    if (r != padding_idx) {
        C scale = 1;
        if (scale_by_freq) {
            long count = 0;
            for (long p = 0; p < positions; ++p) {
                POSITION
                count += idx[idx_off + i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3] == r;
            }
            if (count) scale = (C)1 / (C)count;
        }
        for (long p = 0; p < positions; ++p) {
            POSITION
            if (idx[idx_off + i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3] == r)
                total += (C)LOAD * scale;
        }
    }
    STORE
}
"""
# position p of the index tensor as its coordinates (i0, i1, i2, i3), sizes (s0,) s1, s2, s3
_POSITION = """long rest = p;
                const long i3 = rest % s3; rest /= s3;
                const long i2 = rest % s2; rest /= s2;
                const long i1 = rest % s1;
                const long i0 = rest / s1;"""
_BACKWARD_NAMES = ["g", "g_off", "g_st0", "g_st1", "g_st2", "g_st3", "g_stc", "idx", "idx_off",
                   "st0", "st1", "st2", "st3", "s1", "s2", "s3", "out", "out_off", "rows",
                   "cols", "positions", "padding_idx", "scale_by_freq"]


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    """The weight's gradient in one launch (Note [Embedding backward in one launch]): the
    gradient and the indices read through their strides (index tensors of up to four dims;
    more are reshaped), so neither is copied first."""
    rt = runtime_of(grad_output)
    cols = grad_output._shape[-1]
    if indices.ndim > RANK:
        indices = indices.reshape(-1)
        grad_output = grad_output.reshape(-1, cols)
    out = rt.empty((num_weights, cols), contiguous_strides((num_weights, cols)),
                   grad_output.dtype)
    if not out.numel():
        return out
    dtype = out.dtype.name
    compute = "double" if dtype == "float64" else "float"
    index_type = INDEX_TYPES[indices.dtype]
    pad = RANK - indices.ndim
    sizes = (1,) * pad + tuple(indices._shape)
    g_strides = grad_output._get_strides()
    values = [*rt.buffer_of(grad_output), *(0,) * pad, *g_strides, *rt.buffer_of(indices),
              *(0,) * pad, *indices._get_strides(), *sizes[1:], *rt.buffer_of(out),
              num_weights, cols, indices.numel(), padding_idx, int(scale_grad_by_freq)]

    def build():
        load = load_expr(dtype, "g", "g_off + i0 * g_st0 + i1 * g_st1 + i2 * g_st2 + "
                                     "i3 * g_st3 + c * g_stc")
        source = _BACKWARD.replace("POSITION", _POSITION).replace("LOAD", f"({load})").replace(
            "STORE", store_statement(dtype, "out", "out_off + x", "total"))
        source = f"#define G {BUFFER_TYPES[dtype]}\n#define I {index_type}\n" \
                 f"#define C {compute}\n" + source
        return with_helpers(FP64 + source if compute == "double" else source), _BACKWARD_NAMES
    launch("aten::embedding_dense_backward", ("embedding_dense_backward", dtype, index_type),
           build, values, [grad_output, indices, out], out.numel(), rt,
           names=lambda: _BACKWARD_NAMES)
    return out


# Note [Renorm on the device]: ``embedding_renorm_`` (``max_norm``) rescales, in place, each
# row the indices name whose p-norm exceeds max_norm, by max_norm / (norm + 1e-7) (ATen's
# ``embedding_renorm_cpu_``). One work-item per row of the weight walks the indices: a repeated
# index names its row once, as ATen's sorted unique walk does, and no two work-items share a
# row (no race). An index out of range leaves the whole weight as it was: every work-item sees
# it and writes nothing, and row 0's work-item flags the first one in the check slot of
# ``embedding`` (raised at the next sync point, Note [Device-side asserts]; the CPU raises
# before writing too).
_RENORM = """__kernel void k_embedding_renorm_(__global G* restrict w, const long w_off,
        const long w_st0, const long w_st1, __global const I* restrict idx, const long idx_off,
        const long st0, const long st1, const long st2, const long st3, const long s1,
        const long s2, const long s3, const long rows, const long cols, const long positions,
        const C max_norm, const C norm_type, __global long* restrict flags, const long slot) {
    const long r = get_global_id(0);
    if (r >= rows) return;
    int hit = 0, bad = 0;
    long first_bad = 0;
    for (long p = 0; p < positions; ++p) {
        POSITION
        const long v = idx[idx_off + i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3];
        if (v < 0 || v >= rows) {
            if (!bad) first_bad = v;
            bad = 1;
        } else if (v == r) {
            hit = 1;
        }
    }
    if (bad) {
#if CHECKED
        if (r == 0) {
            flags[2 * slot + 1] = first_bad;
            flags[2 * slot] = 1;
        }
#endif
        return;
    }
    if (!hit) return;
    C norm = 0;
    if (isinf(norm_type)) {
        norm = norm_type > 0 ? 0 : INFINITY;
        for (long c = 0; c < cols; ++c) {
            const C a = fabs((C)LOAD);
            norm = norm_type > 0 ? fmax(norm, a) : fmin(norm, a);
        }
    } else if (norm_type == 0) {
        for (long c = 0; c < cols; ++c) norm += (C)LOAD != 0;
    } else if (norm_type == 1) {
        for (long c = 0; c < cols; ++c) norm += fabs((C)LOAD);
    } else if (norm_type == 2) {
        for (long c = 0; c < cols; ++c) norm += (C)LOAD * (C)LOAD;
        norm = sqrt(norm);
    } else {
        for (long c = 0; c < cols; ++c) norm += pow(fabs((C)LOAD), norm_type);
        norm = pow(norm, (C)1 / norm_type);
    }
    if (norm > max_norm) {
        const C scale = max_norm / (norm + (C)1e-7);
        for (long c = 0; c < cols; ++c) {
            const C value = (C)LOAD * scale;
            STORE
        }
    }
}
"""
_RENORM_NAMES = ["w", "w_off", "w_st0", "w_st1", "idx", "idx_off", "st0", "st1", "st2", "st3",
                 "s1", "s2", "s3", "rows", "cols", "positions", "max_norm", "norm_type", "flags",
                 "slot"]
_COMPUTE = {"float32": "float", "float64": "double", "float16": "float", "bfloat16": "float"}


def embedding_renorm_(self, indices, max_norm, norm_type):
    """Rows ``indices`` of ``self`` rescaled to ``max_norm`` where their norm exceeds it, in one
    launch (Note [Renorm on the device])."""
    DN.embedding_renorm_.meta(self, indices, max_norm, norm_type)
    dtype = self.dtype.name
    if dtype not in _COMPUTE:
        raise NotImplementedError(f"\"embedding_renorm_\" not implemented for "
                                  f"'{type_name(self.dtype)}' on the 'OpenCL' backend")
    rows, cols = self._shape
    slot = device_slot(indices, *_ERROR) if rows else None
    if slot is None:
        check_indices(indices, rows, *_ERROR)
    if not rows or not indices.numel():
        return self
    if indices.ndim > RANK:
        indices = indices.reshape(-1)
    rt = runtime_of(self)
    compute, index_type = _COMPUTE[dtype], INDEX_TYPES[indices.dtype]
    scalar = self.dtype.np.type if compute == "double" else D.float32.np.type
    pad = RANK - indices.ndim
    sizes = (1,) * pad + tuple(indices._shape)
    values = [*rt.buffer_of(self), *self._get_strides(), *rt.buffer_of(indices),
              *(0,) * pad, *indices._get_strides(), *sizes[1:], rows, cols, indices.numel(),
              scalar(max_norm), scalar(norm_type),
              *((rt.asserts.buffer, slot) if slot is not None else (None, 0))]

    def build():
        at = "w_off + r * w_st0 + c * w_st1"
        source = _RENORM.replace("POSITION", _POSITION).replace(
            "LOAD", f"({load_expr(dtype, 'w', at)})").replace(
            "STORE", store_statement(dtype, "w", at, "value"))
        source = f"#define G {BUFFER_TYPES[dtype]}\n#define I {index_type}\n" \
                 f"#define C {compute}\n#define CHECKED {int(slot is not None)}\n" + source
        return with_helpers(FP64 + source if compute == "double" else source), _RENORM_NAMES
    launch("aten::embedding_renorm_", ("embedding_renorm_", dtype, index_type, slot is not None),
           build, values, [self, indices], rows, rt, names=lambda: _RENORM_NAMES)
    return self


KERNELS = {DN.embedding: embedding, DN.embedding_dense_backward: embedding_dense_backward,
           DN.embedding_renorm_: embedding_renorm_, SC.index_select: index_select}
