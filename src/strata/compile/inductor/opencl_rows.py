"""The OpenCL device's kernels with an inner loop: reductions, softmax, indexing, matmul.

A reduction is one work-item per output element looping over the reduced dims (a work-group
tree reduction is later work); softmax is a row kernel (max, then the sum of exp(x - max)) and a
pointwise kernel; floating matrix products use the tiled GEMM of oclprinter.py.
"""

from functools import partial

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import activation as A
from ...ops import linalg as L
from ...ops import normalization as NO
from ...ops import reductions as RED
from ...ops import shape as SH
from .ir import InputBuffer, Kernel, Pointwise, Reduction, ops
from .oclprinter import BLOCK, TILE, WPT, print_gemm, print_gemm_blocked, print_kernel
from .opencl_lane import launch_lane
from .opencl_pointwise import (
    broadcast_strides,
    identity,
    is_device,
    kernel_name,
    launch,
    math_formula,
    new_output,
    pointwise,
    runtime_of,
    scalar_argument,
    tensor_names,
    tensor_values,
)


def opmath(dtype):
    """The dtype a kernel's intermediate results keep: float32 for half dtypes, as ATen's
    ``opmath_type`` (oclprinter's Note [Half dtypes]); a row's statistics rounded to half
    before the rows use them would move softmax and the norms off PyTorch's results."""
    return D.float32 if dtype in (D.float16, D.bfloat16) else dtype


# --- reductions -----------------------------------------------------------------------------------

def reduce(op_name, kind, x, dims, keepdim, compute, outputs, mean=False, eps=None,
           element=None, finish=None, lane=None):
    """Reduce ``x`` over ``dims`` with ``kind`` (sum/prod/max/min/argmax/argmin; logsumexp: the
    max and the sum of exp(x - max); meanvar: the mean and the sum of squared deviations), one
    work-item per output element. ``outputs``: (tensor, "value" | "index" | "den" | "mu" |
    "rstd" | "var") pairs, laid out as the meta function said (``keepdim``
    keeps size-1 dims at the reduced positions). ``element`` maps each element (in x's
    dtype) before the conversion to ``compute`` and the reduction, ``finish`` maps the result
    (formulas of one value). Rows of ``GROUP_ROW`` elements or more get a
    work-group each, with a tree in local memory (oclprinter's Note [Work-group reductions]).
    ``lane``: (a ``PointwiseLane``, the call's signature) to remember a one-output launch in."""
    rt = runtime_of(x)
    nd = x.ndim
    dims = sorted({d % nd for d in dims}) if nd else []
    kept = [d for d in range(nd) if d not in dims]
    strides = x._get_strides()
    values = [*rt.buffer_of(x)]                 # in the order of ``names`` below
    for d in (*kept, *dims):
        values += (x._shape[d], strides[d])
    for t, _ in outputs:
        out_strides = t._get_strides()
        values += tensor_values(rt, t, [out_strides[d] for d in kept] if keepdim else
                                out_strides)

    def names():
        listed = ["src", "src_off"]
        for j in range(len(kept)):
            listed += (f"ks{j}", f"src_kst{j}")
        for j in range(len(dims)):
            listed += (f"rs{j}", f"src_rst{j}")
        for n in range(len(outputs)):
            listed += tensor_names(f"out{n}", len(kept))
        return listed
    what = tuple((t.dtype.name, w) for t, w in outputs)
    total = 1
    for d in kept:
        total *= x._shape[d]
    group = _group_size(rt, kind, x.numel() // max(total, 1))
    key = (op_name, kind, len(kept), len(dims), x.dtype.name, compute.name, what, mean, eps,
           element, finish, group)

    def build():
        ranges = tuple(f"ks{j}" for j in range(len(kept)))
        rranges = tuple(f"rs{j}" for j in range(len(dims)))
        source = InputBuffer("src", x.dtype.name, (None,) * nd, tuple(
            f"src_kst{j}" for j in range(len(kept))) + tuple(
            f"src_rst{j}" for j in range(len(dims))), "src_off")

        def inner(index, rindex):
            v = source.load(tuple(index) + tuple(rindex))
            v = element(v) if element else v
            return v if v.dtype == compute.name else ops.to_dtype(v, compute.name)
        red_dtype = "int64" if kind.startswith("arg") else compute.name
        if kind == "logsumexp":      # the max, then the sum of exp(x - max): softmax's rows
            nodes = [Reduction("red", red_dtype, ranges, rranges, "max", inner),
                     Reduction("den", red_dtype, ranges, rranges, "sum", partial(_shifted_exp,
                                                                                 inner))]
        elif kind == "meanvar":      # the mean, then the sum of squared deviations from it
            nodes = [Reduction("red", red_dtype, ranges, rranges, "sum", inner),
                     Pointwise("mu", red_dtype, ranges, partial(_mean_of_row, rranges)),
                     Reduction("den", red_dtype, ranges, rranges, "sum",
                               partial(_squared_deviation, inner))]
        else:
            nodes = [Reduction("red", red_dtype, ranges, rranges, kind, inner)]
        layouts = {}
        for n, (t, which) in enumerate(outputs):
            name = f"out{n}"
            layouts[name] = InputBuffer(name, t.dtype.name, ranges, tuple(
                f"{name}_st{j}" for j in range(len(kept))), f"{name}_off")
            nodes.append(Pointwise(name, t.dtype.name, ranges,
                                   partial(_reduced, which, t.dtype.name, rranges, mean,
                                           kind.startswith("arg"), eps, finish)))
        kernel = Kernel(kernel_name(op_name), [source], nodes, frozenset({"red", "den", "mu"}))
        return print_kernel(kernel, ranges, layouts, group=group)
    tensors = [x, *(t for t, _ in outputs)]
    size, local = ((total * group,), (group,)) if group else (total, None)
    plan = launch(op_name, key, build, values, tensors, size, rt, local, names)
    if lane is not None and len(outputs) == 1 and x.numel() and outputs[0][0].numel():
        # x's buffer is the first value, the output's follows the sizes and strides
        lane[0].remember_launch(lane[1], rt, outputs[0][0], plan, values,
                                [0, 2 + 2 * (len(kept) + len(dims))], size, local)


GROUP_ROW = 256       # rows at least this long get a work-group each (Note [Work-group ...])


def _group_size(rt, kind, row):
    """The work-group size of a tree reduction over rows of ``row`` elements, or None for one
    work-item per row: short rows, and argmax/argmin (their ties need the first index)."""
    if row < GROUP_ROW or kind.startswith("arg"):
        return None
    limit = min(rt.cl_device.max_work_group_size, 256)
    return 1 << (limit.bit_length() - 1)


def _shifted_exp(inner, index, rindex):
    return ops.exp(ops.sub(inner(index, rindex), ops.load("red", "0")))


def _mean_of_row(rranges, index):
    v = ops.load("red", "0")
    return ops.truediv(v, ops.index_expr(" * ".join(rranges) or "1", v.dtype))


def _squared_deviation(inner, index, rindex):
    d = ops.sub(inner(index, rindex), ops.load("mu", "0"))
    return ops.mul(d, d)


def _reduced(which, dtype, rranges, mean, arg, eps, finish, index):
    if which in ("rstd", "var"):   # the biased variance; rstd: 1 / sqrt(it + eps)
        var = ops.truediv(ops.load("den", "0"),
                          ops.index_expr(" * ".join(rranges) or "1", dtype))
        return var if which == "var" else ops.rsqrt(ops.add(var, ops.constant(eps, dtype)))
    name = {"den": "den", "index": "red", "mu": "mu"}.get(which, "red_value" if arg else "red")
    v = ops.load(name, "0")
    if mean:
        v = ops.truediv(v, ops.index_expr(" * ".join(rranges) or "1", v.dtype))
    if finish:
        v = finish(v)
    return v if v.dtype == dtype else ops.to_dtype(v, dtype)


def _dims(x, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.ndim))
    return [dim] if isinstance(dim, int) else list(dim)


def _sum_dim(self, dim=None, keepdim=False, dtype=None, lane=None):
    spec = RED.sum.meta(self, dim, keepdim, dtype)
    out = new_output(spec, self)
    reduce("aten::sum.dim_IntList", "sum", self, _dims(self, dim), keepdim, spec.dtype,
           [(out, "value")], lane=lane)
    return out


def _mean_dim(self, dim=None, keepdim=False, dtype=None, lane=None):
    spec = RED.mean.meta(self, dim, keepdim, dtype)
    out = new_output(spec, self)
    reduce("aten::mean.dim", "sum", self, _dims(self, dim), keepdim, spec.dtype,
           [(out, "value")], mean=True, lane=lane)
    return out


sum_dim = launch_lane("aten::sum.dim_IntList", _sum_dim)
mean_dim = launch_lane("aten::mean.dim", _mean_dim)


def extreme(op, kind):
    def kernel(self, dim=(), keepdim=False):
        spec = op.meta(self, dim, keepdim)
        out = new_output(spec, self)
        reduce(op.qualname, kind, self, _dims(self, dim), keepdim, self.dtype,
               [(out, "value")])
        return out
    return kernel


def full_extreme(op, kind):
    def kernel(self):
        out = new_output(op.meta(self), self)
        reduce(op.qualname, kind, self, list(range(self.ndim)), False, self.dtype,
               [(out, "value")])
        return out
    return kernel


def extreme_dim(op, kind):
    def kernel(self, dim, keepdim=False):
        specs = op.meta(self, dim, keepdim)
        values, indices = new_output(specs[0], self), new_output(specs[1], self)
        reduce(op.qualname, kind, self, [dim], keepdim, self.dtype,
               [(values, "value"), (indices, "index")])
        return type(specs)(values, indices) if hasattr(specs, "_fields") else (values, indices)
    return kernel


def arg_kernel(op, kind):
    def kernel(self, dim=None, keepdim=False):
        out = new_output(op.meta(self, dim, keepdim), self)
        x = self if dim is not None else self.reshape(-1) if self.is_contiguous() else \
            self.contiguous().reshape(-1)
        reduce(op.qualname, kind, x, [0 if dim is None else dim],
               keepdim and dim is not None, self.dtype, [(out, "index")])
        return out
    return kernel


# --- softmax ------------------------------------------------------------------------------------

def _row_stats(op_name, x, dim, compute):
    """Per row along ``dim``: (max, sum of exp(x - max)), with ``dim`` kept as size 1."""
    rt = runtime_of(x)
    shape = list(x._shape)
    if shape:
        shape[dim] = 1
    m = rt.empty(tuple(shape), contiguous_strides(shape), compute)
    d = rt.empty(tuple(shape), contiguous_strides(shape), compute)
    reduce(op_name, "logsumexp", x, [dim] if x.ndim else [], True, compute,
           [(m, "value"), (d, "den")])
    return m, d


def softmax_formula(x, m, d):
    return ops.truediv(ops.exp(ops.sub(x, m)), d)


def log_softmax_formula(x, m, d):
    return ops.sub(ops.sub(x, m), ops.log(d))


def softmax_kernel(op, formula):
    def kernel(self, dim, half_to_float=False):
        spec = op.meta(self, dim, half_to_float)
        c = opmath(spec.dtype)
        m, d = _row_stats(op.qualname, self, dim % max(self.ndim, 1), c)
        return pointwise(op.qualname, formula, [(self, c), (m, c), (d, c)], new_output(spec, self))
    return kernel


def safe_softmax(self, dim, dtype=None):
    """softmax, with 0 for a row that is all -inf (a fully masked attention row) instead of
    NaN."""
    spec = A._safe_softmax.meta(self, dim, dtype)
    c = opmath(spec.dtype)
    m, d = _row_stats("aten::_safe_softmax", self, dim % max(self.ndim, 1), c)
    return pointwise("aten::_safe_softmax", _safe_softmax_formula, [(self, c), (m, c), (d, c)],
                     new_output(spec, self))


def _safe_softmax_formula(x, m, d):
    masked = ops.eq(m, ops.constant(float("-inf"), m.dtype))
    return ops.where(masked, ops.constant(0, x.dtype), softmax_formula(x, m, d))


def softmax_backward(grad_output, output, dim, input_dtype):
    """grad_input = y * (g - sum(g * y, dim))."""
    dim = A._check_softmax_backward("softmax", grad_output, output, dim, input_dtype)
    c = opmath(grad_output.dtype)
    gy = pointwise("aten::mul.Tensor", _MULTIPLY, [(grad_output, c), (output, c)],
                   _like(output, c))
    total = _keepdim_sum(gy, dim, c)
    return pointwise("aten::_softmax_backward_data", _softmax_grad,
                     [(grad_output, c), (output, c), (total, c)],
                     _like(output, grad_output.dtype))


# made once: a formula is part of its kernel's key, so a new one per call would print (and
# keep) a new kernel per call
_MULTIPLY = math_formula("mul")


def _like(x, dtype):
    return runtime_of(x).empty(tuple(x._shape), contiguous_strides(x._shape), dtype)


def _softmax_grad(g, y, total):
    return ops.mul(y, ops.sub(g, total))


def log_softmax_backward(grad_output, output, dim, input_dtype):
    """grad_input = g - exp(y) * sum(g, dim)."""
    dim = A._check_softmax_backward("log_softmax", grad_output, output, dim, input_dtype)
    c = opmath(grad_output.dtype)
    total = _keepdim_sum(grad_output, dim, c)
    return pointwise("aten::_log_softmax_backward_data", _log_softmax_grad,
                     [(grad_output, c), (output, c), (total, c)],
                     _like(output, grad_output.dtype))


def _log_softmax_grad(g, y, total):
    return ops.sub(g, ops.mul(ops.exp(y), total))


def _keepdim_sum(x, dim, compute):
    shape = list(x._shape)
    if shape:
        shape[dim % len(shape)] = 1
    total = runtime_of(x).empty(tuple(shape), contiguous_strides(shape), compute)
    reduce("aten::sum.dim_IntList", "sum", x, [dim] if x.ndim else [], True, compute,
           [(total, "value")])
    return total


# --- layer norm ---------------------------------------------------------------------------------

def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): a row kernel for the statistics, then one pointwise kernel."""
    out_spec, stats_spec, _ = NO.native_layer_norm.meta(input, normalized_shape, weight, bias,
                                                         eps)
    axis = input.ndim - len(normalized_shape)
    stats = [new_output(stats_spec, input), new_output(stats_spec, input)]
    c = opmath(stats_spec.dtype)
    # half statistics are returned rounded, the rows use them in float (as ATen's CPU kernel)
    kept = stats if c is stats_spec.dtype else [_like(t, c) for t in stats]
    outputs = [(kept[0], "mu"), (kept[1], "rstd")]
    if kept is not stats:
        outputs += [(stats[0], "mu"), (stats[1], "rstd")]
    reduce("aten::native_layer_norm", "meanvar", input, list(range(axis, input.ndim)), True, c,
           outputs, eps=float(eps))
    operands = [(input, c), (kept[0], c), (kept[1], c)]
    operands += [(t, c) for t in (weight, bias) if t is not None]
    affine = (weight is not None, bias is not None)
    out = pointwise("aten::native_layer_norm", _NORMALIZE[affine], operands,
                    new_output(out_spec, input))
    return out, stats[0], stats[1]


def _normalize(affine, x, mean, rstd, *params):
    y = ops.mul(ops.sub(x, mean), rstd)
    params = list(params)
    if affine[0]:
        y = ops.mul(y, params.pop(0))
    if affine[1]:
        y = ops.add(y, params.pop(0))
    return y


_NORMALIZE = {affine: partial(_normalize, affine) for affine in
              ((False, False), (True, False), (False, True), (True, True))}


# --- indexing -----------------------------------------------------------------------------------

def gather(op_name, src, index, out, dim):
    """``out[..i_dim..] = src[.., index[i_dim..i_dim+index.ndim], ..]``: out's dims
    ``dim .. dim + index.ndim`` address ``index``, whose value replaces them in ``src``. An
    index out of range reads row 0: the device check reports it at the next sync point
    (opencl_checks.py), and no kernel reads outside its buffer."""
    rt = runtime_of(out)
    values = [src._shape[dim] if src.ndim else 1, *tensor_values(rt, src),
              *tensor_values(rt, index), *tensor_values(rt, out), *out._shape]

    def names():
        return ["bound", *tensor_names("src", src.ndim), *tensor_names("idx", index.ndim),
                *tensor_names("out0", out.ndim), *(f"s{d}" for d in range(out.ndim))]
    key = (op_name, src.ndim, index.ndim, out.ndim, dim, src.dtype.name, index.dtype.name)

    def build():
        def buf(name, t):
            return InputBuffer(name, t.dtype.name, (None,) * t.ndim,
                               tuple(f"{name}_st{d}" for d in range(t.ndim)), f"{name}_off")
        src_b, idx_b, out_b = buf("src", src), buf("idx", index), buf("out0", out)
        ranges = tuple(f"s{d}" for d in range(out.ndim))

        def inner(i):
            at = ops.load("idx", idx_b.index(i[dim:dim + index.ndim]))
            zero = ops.constant(0, index.dtype.name)
            inside = ops.logical_and(ops.ge(at, zero), ops.lt(at, ops.load("bound", "0")))
            at = ops.where(inside, at, zero)
            where = (*i[:dim], str(at), *i[dim + index.ndim:]) if src.ndim else ()
            return ops.load("src", src_b.index(where))
        bound = InputBuffer("bound", "int64", (), ())
        kernel = Kernel(kernel_name(op_name), [src_b, idx_b, bound],
                        [Pointwise("out0", out.dtype.name, ranges, inner)])
        return print_kernel(kernel, ranges, {"out0": out_b}, frozenset({"bound"}))
    launch(op_name, key, build, values, [src, index, out], out.numel(), rt, names=names)
    return out


def stack(tensors, dim=0):
    """Each input copied into its slice of a new dim of the output (the meta function's
    layout)."""
    spec = SH.stack.meta(tensors, dim)
    shape = tuple(spec.shape)
    out = runtime_of(next(t for t in tensors if is_device(t))).empty(
        shape, tuple(spec.strides or contiguous_strides(shape)), spec.dtype)
    dim = dim % out.ndim
    for n, t in enumerate(tensors):
        if not is_device(t):
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {out.device} and {t.device}!")
        pointwise("aten::stack", identity, [(t, out.dtype)], out.select(dim, n))
    return out


# --- matrix products ------------------------------------------------------------------------------

def matmul(op_name, a, b, out, bias=None, beta=1, alpha=1, lane=None):
    """``out = beta * bias + alpha * (a @ b)`` for 2-d or batched 3-d operands: the tiled GEMM
    for floating and complex dtypes, a loop-IR reduction over k per output element for
    integers. ``lane``: (a ``PointwiseLane``, the call's signature) to remember the GEMM's
    launch in."""
    if out.dtype.is_floating_point or out.dtype.is_complex:
        return tiled_matmul(op_name, a, b, out, bias, beta, alpha, lane)
    rt = runtime_of(out)
    batched = a.ndim == 3
    values = [*tensor_values(rt, a), *tensor_values(rt, b), *tensor_values(rt, out),
              a._shape[-2], b._shape[-1], a._shape[-1], a._shape[0]]
    use_bias = bias is not None and beta != 0
    if use_bias:
        values += tensor_values(rt, bias, broadcast_strides(bias, 2, False))
        values += (scalar_argument(alpha, out.dtype), scalar_argument(beta, out.dtype))

    def names():
        listed = [*tensor_names("a", a.ndim), *tensor_names("b", b.ndim),
                  *tensor_names("out0", out.ndim), "ms", "ns", "ks", "bs"]
        return listed + ([*tensor_names("c", 2), "alpha", "beta"] if use_bias else [])
    dt = out.dtype.name
    key = (op_name, batched, use_bias, dt)

    def build():
        rank = 3 if batched else 2
        ranges = (("bs",) if batched else ()) + ("ms", "ns")

        def buf(name, dims=rank):
            return InputBuffer(name, dt, (None,) * dims,
                               tuple(f"{name}_st{d}" for d in range(dims)), f"{name}_off")
        A_, B_, out_layout = buf("a"), buf("b"), buf("out0")
        C_ = buf("c", 2)
        inputs = [A_, B_]

        def product(index, rindex):
            *batch, i, j = index
            (k,) = rindex
            return ops.mul(A_.load((*batch, i, k)), B_.load((*batch, k, j)))
        nodes = [Reduction("red", dt, ranges, ("ks",), "sum", product)]
        scalars = frozenset()
        if use_bias:
            inputs += [C_, InputBuffer("alpha", dt, (), ()), InputBuffer("beta", dt, (), ())]
            scalars = frozenset({"alpha", "beta"})

            def result(index):
                acc = ops.mul(ops.load("alpha", "0"), ops.load("red", "0"))
                return ops.add(ops.mul(ops.load("beta", "0"), C_.load(index[-2:])), acc)
        else:
            def result(index):
                return ops.load("red", "0")
        nodes.append(Pointwise("out0", dt, ranges, result))
        kernel = Kernel(kernel_name(op_name), inputs, nodes, frozenset({"red"}))
        return print_kernel(kernel, ranges, {"out0": out_layout}, scalars)
    tensors = [a, b, out] + ([bias] if use_bias else [])
    launch(op_name, key, build, values, tensors, out.numel(), rt, names=names)
    return out


_GEMM_STRIDES = {"a": ("stm", "stk"), "b": ("stk", "stn"), "out0": ("stm", "stn")}


def tiled_matmul(op_name, a, b, out, bias, beta, alpha, lane=None):
    rt = runtime_of(out)
    batched = a.ndim == 3
    values = []                 # in the order of _gemm_names
    for t in (a, b, out):
        strides = t._get_strides()
        values += (*rt.buffer_of(t), strides[0] if batched else 0, *strides[-2:])
    m, n, k = a._shape[-2], b._shape[-1], a._shape[-1]
    values += (m, n, k, scalar_argument(alpha, out.dtype))
    use_bias = bias is not None and beta != 0
    if use_bias:
        values += (*rt.buffer_of(bias), *broadcast_strides(bias, 2, False),
                   scalar_argument(beta, out.dtype))
    # the largest register-blocked tile the output fills; smaller outputs: the plain tiled GEMM
    block, wpt = next(((b, w) for b, w in GEMM_BLOCKINGS if m >= b and n >= b), GEMM_BLOCKINGS[-1])
    blocked = m >= block and n >= block
    vector = blocked and a._get_strides()[-1] == 1 and b._get_strides()[-1] == 1 and \
        k % 4 == 0 and n % 4 == 0 and not out.dtype.is_complex  # whole 4-vectors of A and B
    key = ("aten::gemm", use_bias, out.dtype.name, blocked, vector, block, wpt)
    printer = partial(print_gemm_blocked, vector=vector, block=block, wpt=wpt) if blocked \
        else print_gemm
    tile, per_item = (block // wpt, block) if blocked else (TILE, TILE)
    size = (-(-n // per_item) * tile, -(-m // per_item) * tile, a._shape[0] if batched else 1)
    plan = launch("aten::gemm", key, lambda: printer("k_gemm", out.dtype.name, use_bias),
                  values, [a, b, out] + ([bias] if use_bias else []), size, rt, (tile, tile, 1),
                  _GEMM_NAMES[use_bias])
    operands = [a, b, out] + ([bias] if use_bias else [])
    # kept where the kernel reads each operand, each with a block (an empty one has none)
    if lane is not None and (use_bias or bias is None) and all(t.numel() for t in operands):
        # where each operand's buffer is in ``values`` (_gemm_names' order), in the order
        # the lane passes them (``self`` of addmm, the bias, first), then the output's
        positions = ([19] if use_bias else []) + [0, 5, 10]
        lane[0].remember_launch(lane[1], rt, out, plan, values, positions, size, (tile, tile, 1))
    return out


def _gemm_names(use_bias):
    """The parameter names of ``tiled_matmul``'s values, in its order."""
    names = []
    for name in ("a", "b", "out0"):
        rows, cols = _GEMM_STRIDES[name]
        names += (name, f"{name}_off", f"{name}_stb", f"{name}_{rows}", f"{name}_{cols}")
    names += ("ms", "ns", "ks", "alpha")
    return names + (["c", "c_off", "c_stm", "c_stn", "beta"] if use_bias else [])


_GEMM_NAMES = {use_bias: partial(_gemm_names, use_bias) for use_bias in (False, True)}


# (output tile edge, outputs per work-item edge) of the register-blocked GEMM, largest first. On an
# NVIDIA H200 at 4096^3 (benchmarks/opencl_probe.py): (128, 8) 28.4 TFLOP/s, (64, 8) 21.1,
# (64, 4) 19.7, (128, 4) 22.3; torch (cuBLAS, TF32 off) 50.9. On PoCL (128, 8) is also fastest.
GEMM_BLOCKINGS = ((128, 8), (BLOCK, WPT))


def _mm(self, mat2, lane):
    out = new_output(L.mm.meta(self, mat2), self)
    return matmul("aten::mm", self, mat2, out, lane=lane)


def _bmm(self, mat2, lane):
    out = new_output(L.bmm.meta(self, mat2), self)
    return matmul("aten::bmm", self, mat2, out, lane=lane)


def _addmm(self, mat1, mat2, beta=1, alpha=1, lane=None):
    out = new_output(L.addmm.meta(self, mat1, mat2, beta=beta, alpha=alpha), self)
    if not is_device(self):
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {mat1.device} and {self.device}!")
    return matmul("aten::addmm", mat1, mat2, out, self, beta, alpha, lane)


# prepared launches named as the general path names them; the blockings in use are part of a
# replayed launch (the probe changes them)
mm = launch_lane("aten::gemm", _mm, lambda: GEMM_BLOCKINGS)
bmm = launch_lane("aten::gemm", _bmm, lambda: GEMM_BLOCKINGS)
addmm = launch_lane("aten::gemm", _addmm, lambda: GEMM_BLOCKINGS)
