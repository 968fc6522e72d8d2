"""The OpenCL device's fused layer norm: the forward in one launch for short contiguous rows
(Note [Fused layer norm forward]); the backward in one launch instead of about a dozen
(Note [Fused layer norm backward]).

``native_layer_norm_backward`` views its operands as (rows, N) with N the normalized elements.
One work-item per row of grad_input and one per column of grad_weight/grad_bias (a work-group
tree is later work), accumulating in float for half dtypes (oclprinter's Note [Half dtypes]).
Operands that are not contiguous are copied first (one launch each).
"""

from ...ops import normalization as NO
from ...ops.op import TensorSpec
from .oclprinter import BUFFER_TYPES, FP64, load_expr, store_statement, with_helpers
from .opencl_pointwise import kernel_name, launch, new_output, runtime_of
from .opencl_rows import GROUP_ROW
from .opencl_rows import native_layer_norm as general_layer_norm

_OP = "aten::native_layer_norm_backward"


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """(grad_input, grad_weight, grad_bias), None where ``output_mask`` is False: one launch
    (Note [Fused layer norm backward])."""
    n = 1
    for size in normalized_shape:
        n *= size
    rows = input.numel() // n if n else 0
    g, x = grad_out.contiguous(), input.contiguous()
    m, r = mean.contiguous(), rstd.contiguous()
    w = weight.contiguous() if weight is not None else None
    rt = runtime_of(input)
    g_in = new_output(input, input) if output_mask[0] else None
    # without a weight or bias, their gradients take the input's dtype (as the composite's)
    missing = TensorSpec(tuple(normalized_shape), input.dtype)
    g_w = new_output(weight if weight is not None else missing, input) if output_mask[1] else None
    g_b = new_output(bias if bias is not None else missing, input) if output_mask[2] else None
    compute = "double" if "float64" in {t.dtype.name for t in (g, x, m, r, w) if t is not None} \
        else "float"
    outputs = [t for t in (g_in, g_w, g_b) if t is not None]
    row_items = rows if g_in is not None else 0
    column_items = n if g_w is not None or g_b is not None else 0
    if row_items + column_items:
        tensors = [g, x, m, r, *([w] if w is not None else []), *outputs]
        values = [v for t in tensors for v in rt.buffer_of(t)] + [n, rows, row_items]
        dtypes = tuple(t.dtype.name for t in tensors)
        which = tuple(t is not None for t in (g_in, g_w, g_b))
        launch(_OP, (_OP, dtypes, which, w is not None, compute),
               lambda: _backward_kernel(dtypes, which, w is not None, compute), values,
               tensors, row_items + column_items, rt, names=lambda: _names(len(tensors)) + _SIZES)
    return g_in, g_w, g_b


_SIZES = ["ns", "ms", "row_items"]


def _names(count):
    return [f"{p}{k}" for k in range(count) for p in ("t", "t_off_")]


def _params(dtypes, outputs):
    params = []
    for k, dtype in enumerate(dtypes):
        const = "" if k >= len(dtypes) - outputs else "const "
        params += [f"__global {const}{BUFFER_TYPES[dtype]}* restrict t{k}", f"const long t_off_{k}"]
    return params


def _load(dtypes, k, index, compute):
    return f"(({compute}){load_expr(dtypes[k], f'(t{k} + t_off_{k})', index)})"


def _store(dtypes, k, index, value):
    return store_statement(dtypes[k], f"(t{k} + t_off_{k})", index, value)


# Note [Fused layer norm backward]: ``native_layer_norm_backward`` is one launch of
# ``row_items + ns`` work-items over (ms rows, ns columns): work-item ``x < row_items`` computes
# grad_input's row x (the sums of g*w and g*w*xhat over the row, then
# ``rstd * (g*w - sum(g*w)/N - xhat * sum(g*w*xhat)/N)``, ATen's ``layer_norm_backward_frame``),
# each later one the column ``x - row_items`` of grad_weight and/or grad_bias (the sums over the
# rows of g*xhat and g). The two parts read only the inputs, so they need no order between them
# (two launches before; CUDA runs two kernels too, the column sums a tree over the rows).
def _backward_kernel(dtypes, which, affine, compute):
    """t0 g, t1 x, t2 mean, t3 rstd, [t4 weight], then the outputs ``which`` asks for."""
    k = 5 if affine else 4
    g_in, g_w, g_b = (k + sum(which[:j]) if which[j] else None for j in range(3))
    lines = []
    if g_in is not None:
        g = _load(dtypes, 0, "row * ns + j", compute)
        gw = f"({g} * {_load(dtypes, 4, 'j', compute)})" if affine else g
        x_hat = f"(({_load(dtypes, 1, 'row * ns + j', compute)} - mu) * rs)"
        value = "rs * (gw - a * scale - x_hat * b * scale)"
        lines.append(f"""    if (x < row_items) {{
        const long row = x;
        const {compute} mu = {_load(dtypes, 2, "row", compute)};
        const {compute} rs = {_load(dtypes, 3, "row", compute)};
        const {compute} scale = ({compute})1 / ({compute})ns;
        {compute} a = 0, b = 0;
        for (long j = 0; j < ns; ++j) {{
            const {compute} gw = {gw};
            a += gw;
            b += gw * {x_hat};
        }}
        for (long j = 0; j < ns; ++j) {{
            const {compute} gw = {gw};
            const {compute} x_hat = {x_hat};
            {_store(dtypes, g_in, "row * ns + j", value)}
        }}
        return;
    }}""")
    if g_w is not None or g_b is not None:
        g = _load(dtypes, 0, "i * ns + col", compute)
        x_hat = f"(({_load(dtypes, 1, 'i * ns + col', compute)} - " \
                f"{_load(dtypes, 2, 'i', compute)}) * {_load(dtypes, 3, 'i', compute)})"
        stores = [_store(dtypes, k, "col", total) for k, total in ((g_w, "gw"), (g_b, "gb"))
                  if k is not None]
        lines.append(f"""    const long col = x - row_items;
    {compute} gw = 0, gb = 0;
    for (long i = 0; i < ms; ++i) {{
        const {compute} g = {g};
        gw += g * {x_hat};
        gb += g;
    }}
    {" ".join(stores)}""")
    params = _params(dtypes, sum(which)) + [f"const long {size}" for size in _SIZES]
    body = "\n".join(lines)
    source = f"""{FP64 if compute == "double" else ""}
__kernel void {kernel_name(_OP)}({", ".join(params)}) {{
    const long x = get_global_id(0);
{body}
}}
"""
    return with_helpers(source), _names(len(dtypes)) + _SIZES


# Note [Fused layer norm forward]: for rows shorter than ``GROUP_ROW`` of contiguous float32/
# float64 operands, one work-item per row computes the mean, the sum of squared deviations (the
# general path's two passes, in its order), rstd = rsqrt(var + eps), and writes the statistics
# and the normalized row: one launch where the general path (opencl_rows.py) makes two, as
# CUDA's layer norm is one kernel. Anything else takes the general path.
_FORWARD = """__kernel void k_native_layer_norm(__global const T* restrict x, const long x_off,
        __global const T* restrict w, const long w_off, __global const T* restrict b,
        const long b_off, __global T* restrict out, const long out_off,
        __global T* restrict mean, const long mean_off, __global T* restrict rstd,
        const long rstd_off, const long ns, const T eps) {
    const long r = get_global_id(0);
    __global const T* row = x + x_off + r * ns;
    __global T* dst = out + out_off + r * ns;
    T total = 0;
    for (long j = 0; j < ns; ++j) total += row[j];
    const T mu = total / (T)ns;
    T den = 0;
    for (long j = 0; j < ns; ++j) {
        const T d = row[j] - mu;
        den += d * d;
    }
    const T rs = rsqrt(den / (T)ns + eps);
    mean[mean_off + r] = mu;
    rstd[rstd_off + r] = rs;
    for (long j = 0; j < ns; ++j) {
        const T y = (row[j] - mu) * rs;
        dst[j] = BIAS(WEIGHT(y));
    }
}
"""
_FORWARD_NAMES = ["x", "x_off", "w", "w_off", "b", "b_off", "out", "out_off", "mean", "mean_off",
                  "rstd", "rstd_off", "ns", "eps"]
_CTYPES = {"float32": "float", "float64": "double"}


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd) in one launch where it fits (Note [Fused layer norm forward])."""
    out_spec, stats_spec, _ = NO.native_layer_norm.meta(input, normalized_shape, weight, bias,
                                                         eps)
    n = 1
    for size in normalized_shape:
        n *= size
    operands = [t for t in (input, weight, bias) if t is not None]
    if not (0 < n < GROUP_ROW and out_spec.dtype == stats_spec.dtype == input.dtype and
            all(t.dtype == input.dtype and t.dtype.name in _CTYPES and t.is_contiguous()
                for t in operands)):
        return general_layer_norm(input, normalized_shape, weight, bias, eps)
    rt = runtime_of(input)
    out, mean, rstd = (new_output(out_spec, input), new_output(stats_spec, input),
                       new_output(stats_spec, input))
    rows = input.numel() // n
    if not rows:
        return out, mean, rstd
    ctype = _CTYPES[input.dtype.name]
    values = [*rt.buffer_of(input)]
    for t in (weight, bias):
        values += rt.buffer_of(t) if t is not None else (None, 0)
    for t in (out, mean, rstd):
        values += rt.buffer_of(t)
    values += [n, input.dtype.np.type(eps)]
    affine = (weight is not None, bias is not None)

    def build():
        source = _FORWARD.replace("WEIGHT(y)", "(y * w[w_off + j])" if affine[0] else "y") \
            .replace("BIAS(", "(b[b_off + j] + " if affine[1] else "(")
        source = f"#define T {ctype}\n" + source
        return (FP64 + source if ctype == "double" else source), _FORWARD_NAMES
    launch("aten::native_layer_norm", ("aten::native_layer_norm", "fused", ctype, affine), build,
           values, [*operands, out, mean, rstd], rows, rt, names=lambda: _FORWARD_NAMES)
    return out, mean, rstd


KERNELS = {NO.native_layer_norm_backward: native_layer_norm_backward,
           NO.native_layer_norm: native_layer_norm}
