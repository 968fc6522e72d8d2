"""The OpenCL device's fused softmax kernels: forward and backward of ``softmax`` and
``log_softmax`` in one launch each, as CUDA runs one kernel per call.

Note [Fused softmax]: the general kernels (opencl_rows.py) reduce the row statistics in one
launch and apply them in another (softmax backward: a product, its row sum, then the formula:
three). For short rows of contiguous float32/float64 tensors, one work-item walks its row
(the elements ``inner`` apart: a row along ``dim`` of a contiguous tensor) and does all of it:
the max and the sum of exp(x - max) in the order the general row reduction adds them, then the
outputs. Long rows (``GROUP_ROW`` elements or more: the general path gives them a work-group
each), half dtypes and strided operands take the general path.
"""

from ...ops import activation as A
from .oclprinter import FP64
from .opencl_pointwise import kernel_name, launch, new_output, runtime_of
from .opencl_rows import GROUP_ROW

_FORWARD = """__kernel void NAME(__global const T* restrict x, const long x_off,
                   __global T* restrict out, const long out_off, const long rows,
                   const long n, const long inner) {
    const long r = get_global_id(0);
    if (r >= rows) return;
    const long base = (r / inner) * n * inner + r % inner;
    __global const T* row = x + x_off + base;
    __global T* dst = out + out_off + base;
    T m = -INFINITY;
    for (long k = 0; k < n; ++k) {
        const T v = row[k * inner];
        if (isnan(v) || v > m) m = v;
    }
    T d = 0;
    for (long k = 0; k < n; ++k) d += exp(row[k * inner] - m);
    for (long k = 0; k < n; ++k) dst[k * inner] = FORMULA;
}
"""
_FORWARD_FORMULAS = {"aten::_softmax": "exp(row[k * inner] - m) / d",
                     "aten::_log_softmax": "(row[k * inner] - m) - log(d)"}

_BACKWARD = """__kernel void NAME(__global const T* restrict g, const long g_off,
                   __global const T* restrict y, const long y_off,
                   __global T* restrict out, const long out_off, const long rows,
                   const long n, const long inner) {
    const long r = get_global_id(0);
    if (r >= rows) return;
    const long base = (r / inner) * n * inner + r % inner;
    __global const T* gr = g + g_off + base;
    __global const T* yr = y + y_off + base;
    __global T* dst = out + out_off + base;
    T total = 0;
    for (long k = 0; k < n; ++k) total += TERM;
    for (long k = 0; k < n; ++k) dst[k * inner] = FORMULA;
}
"""
# softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g)
_BACKWARD_FORMULAS = {
    "aten::_softmax_backward_data": ("gr[k * inner] * yr[k * inner]",
                                     "yr[k * inner] * (gr[k * inner] - total)"),
    "aten::_log_softmax_backward_data": ("gr[k * inner]",
                                         "gr[k * inner] - exp(yr[k * inner]) * total")}
_CTYPES = {"float32": "float", "float64": "double"}


def _row_layout(x, dim):
    """(rows, row length, the elements' distance in a row) of contiguous ``x`` along
    ``dim``."""
    shape = x._shape or (1,)
    n = shape[dim]
    inner = 1
    for size in shape[dim + 1:]:
        inner *= size
    return x.numel() // n if n else 0, n, inner


def _fits(tensors, n):
    return n < GROUP_ROW and all(
        t.dtype.name in _CTYPES and t.dtype == tensors[0].dtype and t.is_contiguous() and
        tuple(t._shape) == tuple(tensors[0]._shape) for t in tensors)


def _launch(op_name, template, formulas, tensors, out, n, inner, rows, rt):
    ctype = _CTYPES[out.dtype.name]
    names = _kernel_params(template)
    values = [v for t in (*tensors, out) for v in rt.buffer_of(t)] + [rows, n, inner]

    def build():
        source = template.replace("NAME", kernel_name(op_name))
        if isinstance(formulas, tuple):
            source = source.replace("TERM", formulas[0]).replace("FORMULA", formulas[1])
        else:
            source = source.replace("FORMULA", formulas)
        source = f"#define T {ctype}\n" + source
        return (FP64 + source if ctype == "double" else source), names
    launch(op_name, (op_name, "fused", ctype), build, values, [*tensors, out], rows, rt,
           names=lambda: names)
    return out


def _kernel_params(source):
    """The parameter names of the one kernel in ``source``, in order."""
    params = source[source.index("(") + 1:source.index(")")]
    return [p.split()[-1].lstrip("*") for p in params.split(",")]


def forward(op, general):
    """``_softmax``/``_log_softmax``: fused where it fits, else ``general``."""
    def kernel(self, dim, half_to_float=False):
        spec = op.meta(self, dim, half_to_float)
        rt = runtime_of(self)
        dim %= max(self.ndim, 1)
        rows, n, inner = _row_layout(self, dim)
        if spec.dtype != self.dtype or not _fits([self], n):
            return general(self, dim, half_to_float)
        out = new_output(spec, self)
        if not rows:
            return out
        return _launch(op.qualname, _FORWARD, _FORWARD_FORMULAS[op.qualname], [self], out, n,
                       inner, rows, rt)
    return kernel


def backward(op, name, general):
    """``_softmax_backward_data``/``_log_softmax_backward_data``: fused where it fits."""
    def kernel(grad_output, output, dim, input_dtype):
        dim = A._check_softmax_backward(name, grad_output, output, dim, input_dtype)
        rt = runtime_of(output)
        dim %= max(output.ndim, 1)
        rows, n, inner = _row_layout(output, dim)
        if not _fits([grad_output, output], n):
            return general(grad_output, output, dim, input_dtype)
        out = new_output(output, output)
        if not rows:
            return out
        return _launch(op.qualname, _BACKWARD, _BACKWARD_FORMULAS[op.qualname],
                       [grad_output, output], out, n, inner, rows, rt)
    return kernel


def kernels(table):
    """The fused kernels, each falling back to ``table``'s general one."""
    return {A._softmax: forward(A._softmax, table[A._softmax]),
            A._log_softmax: forward(A._log_softmax, table[A._log_softmax]),
            A._softmax_backward_data: backward(A._softmax_backward_data, "softmax",
                                               table[A._softmax_backward_data]),
            A._log_softmax_backward_data: backward(A._log_softmax_backward_data,
                                                   "log_softmax",
                                                   table[A._log_softmax_backward_data])}
