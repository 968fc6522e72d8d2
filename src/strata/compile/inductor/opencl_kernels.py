"""Every kernel of the ``opencl`` device: loop IR printed to OpenCL C (oclprinter.py).

DESIGN.md's "one code generator, three users": an op's OpenCL kernel runs the op's meta
function (validation, output shape and dtype), allocates its outputs through the device's
caching allocator, builds a loop-IR ``Kernel`` whose sizes, strides and offsets are runtime
arguments, prints it once per structure (op, rank, dtypes) and launches it on the current
stream without waiting. Ops with no entry here get the dispatcher's NotImplementedError
("Could not run 'aten::xxx' with arguments from the 'OpenCL' backend"): nothing falls back to
the CPU. Backends cannot import the compiler, so this module registers the table with
``backends.opencl.register`` when strata is imported.
"""

import numpy as np

from ...backends import opencl as backend
from ...backends.cpu import kernel_table as cpu_kernels
from ...backends.cpu.array import data
from ...backends.opencl import runtime as R
from ...core import dtype as D
from ..._tensor import from_array
from ...core.shape import contiguous_strides
from functools import partial

from ...ops import activation as A
from ...ops import dense as DN
from ...ops import factory as F
from ...ops import linalg as L
from ...ops import pointwise as P
from ...ops import reductions as RED
from ...ops import scatter as SC
from ...ops import shape as SH
from ...ops.meta_rules import promote
from .ir import InputBuffer, Kernel, Pointwise, Reduction, ops
from .oclprinter import TILE, print_gemm, print_kernel

_sources = {}         # structural key -> (source, parameter names)
_CPU_COPY = cpu_kernels()[F.copy_]


def _runtime(tensor=None):
    index = 0 if tensor is None else (tensor.device.index or 0)
    return R.get(index)


def _is_device(x):
    return hasattr(x, "_storage") and x.device.type == "opencl"


def _scalar(x):
    """A Python number, or a 0-dim CPU tensor (PyTorch lets those mix with any device)."""
    if hasattr(x, "_storage"):
        if x.device.type != "cpu" or x.ndim:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, opencl:0 and {x.device}!")
        return x.item()
    return x


def _out(spec, tensor_like):
    shape = tuple(spec.shape)
    return _runtime(tensor_like).empty(shape, contiguous_strides(shape), spec.dtype)


def _strides_for(t, rank, flat):
    """The runtime stride values of ``t`` broadcast to ``rank`` dims (one dim if ``flat``)."""
    if flat:
        return (1,)
    pad = rank - t.ndim
    return tuple(0 if d < pad or t._shape[d - pad] == 1 else t._strides[d - pad]
                 for d in range(rank))


def _contiguous_like(tensors, out):
    """True when every tensor has the output's shape and contiguous strides: run flat."""
    want = contiguous_strides(out._shape)
    return all(tuple(t._shape) == tuple(out._shape) and tuple(t._get_strides()) == tuple(want)
               for t in (*tensors, out))


def _kernel_name(op_name):
    return "k_" + op_name.removeprefix("aten::").replace(".", "_")   # never a builtin


def _launch(op_name, key, build, values, tensors, global_size, rt, local_size=None):
    """Print ``build()`` once per ``key``, then launch with ``values`` ({param: value})."""
    entry = _sources.get(key)
    if entry is None:
        entry = _sources[key] = build()
    source, names = entry
    args = []
    for name in names:
        v = values[name]
        args.append(np.int64(v) if type(v) is int else v)
    rt.launch(op_name, source, _kernel_name(op_name), global_size, args, tensors, local_size)


def pointwise(op_name, formula, operands, out):
    """``out[i] = formula(*operands at i, cast to compute dtypes)``, broadcasting operands.

    ``operands``: (value, compute dtype) pairs; a value is an opencl tensor or a number."""
    rt = _runtime(out)
    tensors = [v for v, _ in operands if _is_device(v)]
    flat = _contiguous_like(tensors, out)
    rank = 1 if flat else out.ndim
    shape = (out.numel(),) if flat else tuple(out._shape)
    kinds, values = [], {}
    for i, (v, dt) in enumerate(operands):
        name = f"in{i}"
        if _is_device(v):
            buffer, offset = rt.buffer_of(v)
            values[name], values[f"{name}_off"] = buffer, offset
            st = _strides_for(v, rank, flat)
            for d, s in enumerate(st):
                values[f"{name}_st{d}"] = s
            kinds.append(("t", v.dtype.name, dt.name, tuple(s == 0 for s in st)))
        else:
            v = _scalar(v)
            values[name] = np.array(v, dtype=dt.np)[()]
            kinds.append(("s", dt.name))
    buffer, offset = rt.buffer_of(out)
    values["out0"], values["out0_off"] = buffer, offset
    for d, s in enumerate((1,) if flat else out._get_strides()):
        values[f"out0_st{d}"] = s
    for d, s in enumerate(shape):
        values[f"s{d}"] = s
    key = (op_name, formula, rank, tuple(kinds), out.dtype.name)

    def build():
        inputs, scalars, loads = [], set(), []
        for i, kind in enumerate(kinds):
            name = f"in{i}"
            if kind[0] == "t":
                _, dt, cdt, zero = kind
                stride = tuple(0 if z else f"{name}_st{d}" for d, z in enumerate(zero))
                b = InputBuffer(name, dt, (None,) * rank, stride, f"{name}_off")
                loads.append((b, cdt))
            else:
                b = InputBuffer(name, kind[1], (), ())
                scalars.add(name)
                loads.append((b, kind[1]))
            inputs.append(b)
        ranges = tuple(f"s{d}" for d in range(rank))

        def inner(index):
            args = []
            for b, cdt in loads:
                v = ops.load(b.name, b.index(index) if b.stride else "0")
                args.append(v if b.dtype == cdt else ops.to_dtype(v, cdt))
            result = formula(*args)
            return result if result.dtype == out.dtype.name else ops.to_dtype(result,
                                                                              out.dtype.name)
        node = Pointwise("out0", out.dtype.name, ranges, inner)
        layout = InputBuffer("out0", out.dtype.name, (None,) * rank,
                             tuple(f"out0_st{d}" for d in range(rank)), "out0_off")
        return print_kernel(Kernel(_kernel_name(op_name), inputs, [node]), ranges,
                            {"out0": layout}, frozenset(scalars))
    _launch(op_name, key, build, values, [*tensors, out], out.numel(), rt)
    return out


# --- reductions -----------------------------------------------------------------------------------

def reduce(op_name, kind, x, dims, keepdim, compute, outputs, mean=False):
    """Reduce ``x`` over ``dims`` with ``kind`` (sum/prod/max/min/argmax/argmin, or logsumexp:
    the max and the sum of exp(x - max)), one work-item per output element. ``outputs``:
    (tensor, "value" | "index" | "den") pairs, laid out as the meta function said (``keepdim``
    keeps size-1 dims at the reduced positions)."""
    rt = _runtime(x)
    nd = x.ndim
    dims = sorted({d % nd for d in dims}) if nd else []
    kept = [d for d in range(nd) if d not in dims]
    strides = x._get_strides()
    buffer, offset = rt.buffer_of(x)
    values = {"src": buffer, "src_off": offset}
    for j, d in enumerate(kept):
        values[f"ks{j}"], values[f"src_kst{j}"] = x._shape[d], strides[d]
    for j, d in enumerate(dims):
        values[f"rs{j}"], values[f"src_rst{j}"] = x._shape[d], strides[d]
    for n, (t, _) in enumerate(outputs):
        buffer, offset = rt.buffer_of(t)
        values[f"out{n}"], values[f"out{n}_off"] = buffer, offset
        out_strides = t._get_strides()
        kept_strides = [out_strides[d] for d in kept] if keepdim else out_strides
        for j, s in enumerate(kept_strides):
            values[f"out{n}_st{j}"] = s
    what = tuple((t.dtype.name, w) for t, w in outputs)
    key = (op_name, kind, len(kept), len(dims), x.dtype.name, compute.name, what, mean)

    def build():
        ranges = tuple(f"ks{j}" for j in range(len(kept)))
        rranges = tuple(f"rs{j}" for j in range(len(dims)))
        source = InputBuffer("src", x.dtype.name, (None,) * nd, tuple(
            f"src_kst{j}" for j in range(len(kept))) + tuple(
            f"src_rst{j}" for j in range(len(dims))), "src_off")

        def inner(index, rindex):
            v = source.load(tuple(index) + tuple(rindex))
            return v if x.dtype == compute else ops.to_dtype(v, compute.name)
        red_dtype = "int64" if kind.startswith("arg") else compute.name
        if kind == "logsumexp":      # the max, then the sum of exp(x - max): softmax's rows
            nodes = [Reduction("red", red_dtype, ranges, rranges, "max", inner),
                     Reduction("den", red_dtype, ranges, rranges, "sum", partial(_shifted_exp,
                                                                                 inner))]
        else:
            nodes = [Reduction("red", red_dtype, ranges, rranges, kind, inner)]
        layouts = {}
        for n, (t, which) in enumerate(outputs):
            name = f"out{n}"
            layouts[name] = InputBuffer(name, t.dtype.name, ranges, tuple(
                f"{name}_st{j}" for j in range(len(kept))), f"{name}_off")
            nodes.append(Pointwise(name, t.dtype.name, ranges,
                                   partial(_reduced, which, t.dtype.name, rranges, mean,
                                           kind.startswith("arg"))))
        kernel = Kernel(_kernel_name(op_name), [source], nodes, frozenset({"red", "den"}))
        return print_kernel(kernel, ranges, layouts)
    total = 1
    for d in kept:
        total *= x._shape[d]
    _launch(op_name, key, build, values, [x, *(t for t, _ in outputs)], total, rt)


def _shifted_exp(inner, index, rindex):
    return ops.exp(ops.sub(inner(index, rindex), ops.load("red", "0")))


def _reduced(which, dtype, rranges, mean, arg, index):
    name = {"den": "den", "index": "red"}.get(which, "red_value" if arg else "red")
    v = ops.load(name, "0")
    if mean:
        v = ops.truediv(v, ops.index_expr(" * ".join(rranges) or "1", v.dtype))
    return v if v.dtype == dtype else ops.to_dtype(v, dtype)


def _dims(x, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.ndim))
    return [dim] if isinstance(dim, int) else list(dim)


def sum_dim(self, dim=None, keepdim=False, dtype=None):
    spec = RED.sum.meta(self, dim, keepdim, dtype)
    out = _out(spec, self)
    reduce("aten::sum.dim_IntList", "sum", self, _dims(self, dim), keepdim, spec.dtype,
           [(out, "value")])
    return out


def mean_dim(self, dim=None, keepdim=False, dtype=None):
    spec = RED.mean.meta(self, dim, keepdim, dtype)
    out = _out(spec, self)
    reduce("aten::mean.dim", "sum", self, _dims(self, dim), keepdim, spec.dtype,
           [(out, "value")], mean=True)
    return out


def _extreme(op, kind):
    def kernel(self, dim=(), keepdim=False):
        spec = op.meta(self, dim, keepdim)
        out = _out(spec, self)
        reduce(op.qualname, kind, self, _dims(self, dim), keepdim, self.dtype,
               [(out, "value")])
        return out
    return kernel


def _full_extreme(op, kind):
    def kernel(self):
        out = _out(op.meta(self), self)
        reduce(op.qualname, kind, self, list(range(self.ndim)), False, self.dtype,
               [(out, "value")])
        return out
    return kernel


def _extreme_dim(op, kind):
    def kernel(self, dim, keepdim=False):
        specs = op.meta(self, dim, keepdim)
        values, indices = _out(specs[0], self), _out(specs[1], self)
        reduce(op.qualname, kind, self, [dim], keepdim, self.dtype,
               [(values, "value"), (indices, "index")])
        return type(specs)(values, indices) if hasattr(specs, "_fields") else (values, indices)
    return kernel


def _arg(op, kind):
    def kernel(self, dim=None, keepdim=False):
        out = _out(op.meta(self, dim, keepdim), self)
        x = self if dim is not None else self.reshape(-1) if self.is_contiguous() else \
            self.contiguous().reshape(-1)
        reduce(op.qualname, kind, x, [0 if dim is None else dim],
               keepdim and dim is not None, self.dtype, [(out, "index")])
        return out
    return kernel


# --- softmax ------------------------------------------------------------------------------------

def _row_stats(op_name, x, dim, compute):
    """Per row along ``dim``: (max, sum of exp(x - max)), with ``dim`` kept as size 1."""
    rt = _runtime(x)
    shape = list(x._shape)
    if shape:
        shape[dim] = 1
    m = rt.empty(tuple(shape), contiguous_strides(shape), compute)
    d = rt.empty(tuple(shape), contiguous_strides(shape), compute)
    reduce(op_name, "logsumexp", x, [dim] if x.ndim else [], True, compute,
           [(m, "value"), (d, "den")])
    return m, d


def _softmax_formula(x, m, d):
    return ops.truediv(ops.exp(ops.sub(x, m)), d)


def _log_softmax_formula(x, m, d):
    return ops.sub(ops.sub(x, m), ops.log(d))


def _softmax_kernel(op, formula):
    def kernel(self, dim, half_to_float=False):
        spec = op.meta(self, dim, half_to_float)
        c = spec.dtype
        m, d = _row_stats(op.qualname, self, dim % max(self.ndim, 1), c)
        return pointwise(op.qualname, formula, [(self, c), (m, c), (d, c)], _out(spec, self))
    return kernel


def _softmax_backward(grad_output, output, dim, input_dtype):
    """grad_input = y * (g - sum(g * y, dim))."""
    spec = A._softmax_backward_data.meta(grad_output, output, dim, input_dtype)
    c = spec.dtype
    gy = pointwise("aten::mul.Tensor", _formula("mul"), [(grad_output, c), (output, c)],
                   _out(spec, output))
    total = _keepdim_sum(gy, dim, c)
    return pointwise("aten::_softmax_backward_data", _softmax_grad,
                     [(grad_output, c), (output, c), (total, c)], _out(spec, output))


def _softmax_grad(g, y, total):
    return ops.mul(y, ops.sub(g, total))


def _log_softmax_backward(grad_output, output, dim, input_dtype):
    """grad_input = g - exp(y) * sum(g, dim)."""
    spec = A._log_softmax_backward_data.meta(grad_output, output, dim, input_dtype)
    c = spec.dtype
    total = _keepdim_sum(grad_output, dim, c)
    return pointwise("aten::_log_softmax_backward_data", _log_softmax_grad,
                     [(grad_output, c), (output, c), (total, c)], _out(spec, output))


def _log_softmax_grad(g, y, total):
    return ops.sub(g, ops.mul(ops.exp(y), total))


def _keepdim_sum(x, dim, compute):
    shape = list(x._shape)
    if shape:
        shape[dim % len(shape)] = 1
    total = _runtime(x).empty(tuple(shape), contiguous_strides(shape), compute)
    reduce("aten::sum.dim_IntList", "sum", x, [dim] if x.ndim else [], True, compute,
           [(total, "value")])
    return total


# --- indexing -----------------------------------------------------------------------------------

def gather(op_name, src, index, out, dim):
    """``out[..i_dim..] = src[.., index[i_dim..i_dim+index.ndim], ..]``: out's dims
    ``dim .. dim + index.ndim`` address ``index``, whose value replaces them in ``src``."""
    rt = _runtime(out)
    values = {}
    for name, t in (("src", src), ("idx", index), ("out0", out)):
        buffer, offset = rt.buffer_of(t)
        values[name], values[f"{name}_off"] = buffer, offset
        for d, st in enumerate(t._get_strides()):
            values[f"{name}_st{d}"] = st
    for d, size in enumerate(out._shape):
        values[f"s{d}"] = size
    key = (op_name, src.ndim, index.ndim, out.ndim, dim, src.dtype.name, index.dtype.name)

    def build():
        def buf(name, t):
            return InputBuffer(name, t.dtype.name, (None,) * t.ndim,
                               tuple(f"{name}_st{d}" for d in range(t.ndim)), f"{name}_off")
        src_b, idx_b, out_b = buf("src", src), buf("idx", index), buf("out0", out)
        ranges = tuple(f"s{d}" for d in range(out.ndim))

        def inner(i):
            at = ops.load("idx", idx_b.index(i[dim:dim + index.ndim]))
            where = (*i[:dim], str(at), *i[dim + index.ndim:]) if src.ndim else ()
            return ops.load("src", src_b.index(where))
        kernel = Kernel(_kernel_name(op_name), [src_b, idx_b],
                        [Pointwise("out0", out.dtype.name, ranges, inner)])
        return print_kernel(kernel, ranges, {"out0": out_b})
    _launch(op_name, key, build, values, [src, index, out], out.numel(), rt)
    return out


def _host_indices(index):
    """The index values, read on the host to check bounds before any kernel reads memory with
    them (a sync point; CUDA checks on the device and reports at the next sync instead)."""
    host = np.empty(index._shape, index.dtype.np)
    _runtime(index).download(host, index if _contiguous_like((), index) else pointwise(
        "aten::copy_", _identity, [(index, index.dtype)],
        _runtime(index).empty(tuple(index._shape), contiguous_strides(index._shape),
                              index.dtype)))
    return host


def index_select(self, dim, index):
    spec = SC.index_select.meta(self, dim, index)
    size = self._shape[dim % self.ndim] if self.ndim else 1
    idx = _host_indices(index).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        if self.ndim <= 1:
            raise IndexError("index out of range in self")
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    out = _out(spec, self)
    return gather("aten::index_select", self, index.reshape(-1) if index.ndim == 0 else index,
                  out, dim % self.ndim if self.ndim else 0)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    spec = DN.embedding.meta(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    idx = _host_indices(indices)
    if idx.size and (idx.min() < 0 or idx.max() >= weight._shape[0]):
        raise IndexError("index out of range in self")
    return gather("aten::embedding", weight, indices, _out(spec, weight), 0)


def cat(tensors, dim=0):
    """Each input copied into its slice of the output (a strided pointwise copy each)."""
    spec = SH.cat.meta(tensors, dim)
    devices = [t for t in tensors if _is_device(t)]
    out = _out(spec, devices[0])
    if out.ndim == 0 or not out.numel():
        return out
    dim = dim % out.ndim
    at = 0
    for t in tensors:
        if t.ndim == 1 and t._shape[0] == 0 and out.ndim > 1:
            continue        # legacy: 1-d empty tensors are skipped
        if not _is_device(t):
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {out.device} and {t.device}!")
        n = t._shape[dim]
        pointwise("aten::cat", _identity, [(t, out.dtype)], out.narrow(dim, at, n))
        at += n
    return out


# --- matrix products ------------------------------------------------------------------------------

def matmul(op_name, a, b, out, bias=None, beta=1, alpha=1):
    """``out = beta * bias + alpha * (a @ b)`` for 2-d or batched 3-d operands: the tiled GEMM
    for floating dtypes, a loop-IR reduction over k per output element for integers."""
    if out.dtype.is_floating_point:
        return tiled_matmul(op_name, a, b, out, bias, beta, alpha)
    rt = _runtime(out)
    batched = a.ndim == 3
    values = {}
    for name, t in (("a", a), ("b", b), ("out0", out)):
        buffer, offset = rt.buffer_of(t)
        values[name], values[f"{name}_off"] = buffer, offset
        for d, s in enumerate(t._get_strides()):
            values[f"{name}_st{d}"] = s
    values["ms"], values["ns"], values["ks"] = a._shape[-2], b._shape[-1], a._shape[-1]
    if batched:
        values["bs"] = a._shape[0]
    use_bias = bias is not None and beta != 0
    if use_bias:
        buffer, offset = rt.buffer_of(bias)
        values["c"], values["c_off"] = buffer, offset
        for d, s in enumerate(_strides_for(bias, 2, False)):
            values[f"c_st{d}"] = s
        values["alpha"] = np.array(alpha, dtype=out.dtype.np)[()]
        values["beta"] = np.array(beta, dtype=out.dtype.np)[()]
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
        kernel = Kernel(_kernel_name(op_name), inputs, nodes, frozenset({"red"}))
        return print_kernel(kernel, ranges, {"out0": out_layout}, scalars)
    tensors = [a, b, out] + ([bias] if use_bias else [])
    _launch(op_name, key, build, values, tensors, out.numel(), rt)
    return out


_GEMM_STRIDES = {"a": ("stm", "stk"), "b": ("stk", "stn"), "out0": ("stm", "stn")}


def tiled_matmul(op_name, a, b, out, bias, beta, alpha):
    rt = _runtime(out)
    batched = a.ndim == 3
    values = {}
    for name, t in (("a", a), ("b", b), ("out0", out)):
        buffer, offset = rt.buffer_of(t)
        values[name], values[f"{name}_off"] = buffer, offset
        strides = t._get_strides()
        rows, cols = _GEMM_STRIDES[name]
        values[f"{name}_stb"] = strides[0] if batched else 0
        values[f"{name}_{rows}"], values[f"{name}_{cols}"] = strides[-2:]
    m, n, k = a._shape[-2], b._shape[-1], a._shape[-1]
    values["ms"], values["ns"], values["ks"] = m, n, k
    use_bias = bias is not None and beta != 0
    if use_bias:
        buffer, offset = rt.buffer_of(bias)
        values["c"], values["c_off"] = buffer, offset
        values["c_stm"], values["c_stn"] = _strides_for(bias, 2, False)
        values["beta"] = np.array(beta, dtype=out.dtype.np)[()]
    values["alpha"] = np.array(alpha, dtype=out.dtype.np)[()]
    key = ("aten::gemm", use_bias, out.dtype.name)
    tile = TILE
    size = (-(-n // tile) * tile, -(-m // tile) * tile, a._shape[0] if batched else 1)
    _launch("aten::gemm", key, lambda: print_gemm("k_gemm", out.dtype.name, use_bias), values,
            [a, b, out] + ([bias] if use_bias else []), size, rt, (tile, tile, 1))
    return out


def mm(self, mat2):
    out = _out(L.mm.meta(self, mat2), self)
    return matmul("aten::mm", self, mat2, out)


def bmm(self, mat2):
    out = _out(L.bmm.meta(self, mat2), self)
    return matmul("aten::bmm", self, mat2, out)


def addmm(self, mat1, mat2, beta=1, alpha=1):
    out = _out(L.addmm.meta(self, mat1, mat2, beta=beta, alpha=alpha), self)
    if not _is_device(self):
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {mat1.device} and {self.device}!")
    return matmul("aten::addmm", mat1, mat2, out, self, beta, alpha)


# --- memory and copies ----------------------------------------------------------------------------

def alloc(op):
    """``empty``/``empty_strided``: memory from the caching allocator, no launch."""
    def kernel(*args, **kwargs):
        spec = op.meta(*args, **kwargs)
        target = args[op.device_position] if len(args) > op.device_position else None
        rt = R.get(R.device_index(target))
        shape = tuple(spec.shape)
        strides = spec.strides if spec.strides is not None else contiguous_strides(shape)
        return rt.empty(shape, tuple(strides), spec.dtype)
    return kernel


def filled(op, value_position):
    """``full``/``scalar_tensor``: an allocation, then ``fill_``."""
    empty = alloc(op)

    def kernel(*args):
        out = empty(*args)
        return _fill_(out, args[value_position])
    return kernel


def _identity(x):
    return x


def copy_(self, src, non_blocking=False):
    """Every copy with an opencl side: device<->device (a pointwise kernel that converts dtype
    and broadcasts), host->device (an upload, then a kernel if the layout or dtype differs),
    device->host (a kernel to a contiguous buffer if needed, then a download)."""
    F.copy_.meta(self, src, non_blocking)
    if _is_device(self) and _is_device(src):
        if self.device != src.device:
            raise RuntimeError("copies between two OpenCL devices are not supported yet")
        return pointwise("aten::copy_", _identity, [(src, self.dtype)], self)
    if _is_device(self):
        rt = _runtime(self)
        host = np.ascontiguousarray(data(src))
        if src.dtype == self.dtype and tuple(src._shape) == tuple(self._shape) and \
                _contiguous_like((), self):
            rt.upload(self, host, non_blocking)
            return self
        staged = rt.empty(tuple(src._shape), contiguous_strides(src._shape), src.dtype)
        rt.upload(staged, host, non_blocking)
        return pointwise("aten::copy_", _identity, [(staged, self.dtype)], self)
    rt = _runtime(src)
    if not _contiguous_like((), src):
        src = pointwise("aten::copy_", _identity, [(src, src.dtype)],
                        rt.empty(tuple(src._shape), contiguous_strides(src._shape), src.dtype))
    target = data(self)
    if src.dtype == self.dtype and tuple(src._shape) == tuple(self._shape) and \
            target.flags.c_contiguous:
        rt.download(target, src, non_blocking)
        return self
    host = np.empty(src._shape, src.dtype.np)
    rt.download(host, src)
    _CPU_COPY(self, from_array(host))
    return self


# --- the table ------------------------------------------------------------------------------------

def _unary(op, fn):
    def kernel(self, *extra):
        spec = op.meta(self, *extra)
        out = self if spec is self else _out(spec, self)
        compute = self.dtype if spec is self else spec.dtype
        return pointwise(op.qualname, fn, [(self, compute)], out)
    return kernel


def _binary(op, fn, compare=False, alpha=False):
    def kernel(self, other, *extra):
        spec = op.meta(self, other, *extra)
        out = self if spec is self else _out(spec, self)
        compute = promote(self, other) if compare else out.dtype
        operands = [(self, compute), (other, compute)]
        if alpha:
            operands.append((extra[0] if extra else 1, compute))
        return pointwise(op.qualname, fn, operands, out)
    return kernel


def _where(condition, self, other):
    spec = P.where.meta(condition, self, other)
    out = _out(spec, condition if _is_device(condition) else self)
    return pointwise("aten::where.self", ops_where, [(condition, D.bool_), (self, spec.dtype),
                                                     (other, spec.dtype)], out)


def ops_where(c, a, b):
    return ops.where(c, a, b)


def _threshold_backward(grad_output, self, threshold):
    spec = A.threshold_backward.meta(grad_output, self, threshold)
    out = _out(spec, grad_output)
    return pointwise("aten::threshold_backward", _threshold_formula,
                     [(grad_output, spec.dtype), (self, spec.dtype), (threshold, spec.dtype)],
                     out)


def _threshold_formula(g, x, threshold):
    return ops.where(ops.le(x, threshold), ops.constant(0, g.dtype), g)


def _fill_(self, value):
    F.fill_.meta(self, value)
    return pointwise("aten::fill_.Scalar", _identity, [(value, self.dtype)], self)


def _formula(name):
    def formula(*args):
        return getattr(ops, name)(*args)
    formula.__name__ = name
    return formula


def _add(a, b, alpha):
    return ops.add(a, ops.mul(b, alpha))


def _sub(a, b, alpha):
    return ops.sub(a, ops.mul(b, alpha))


UNARY = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin",
    "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "sigmoid": "sigmoid", "reciprocal": "reciprocal", "abs": "abs", "neg": "neg", "relu": "relu",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "logical_not": "logical_not",
    "isnan": "isnan",
}
BINARY = {"mul": "mul", "div": "truediv", "maximum": "maximum", "minimum": "minimum",
          "logical_and": "logical_and", "logical_or": "logical_or"}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def kernels() -> dict:
    """{op: OpenCL kernel} for every op the opencl device runs."""
    table = {F.empty: alloc(F.empty), F.empty_strided: alloc(F.empty_strided), F.copy_: copy_,
             F.fill_: _fill_, F.full: filled(F.full, 1),
             F.scalar_tensor: filled(F.scalar_tensor, 0), P.where: _where, A.threshold_backward: _threshold_backward,
             A._softmax: _softmax_kernel(A._softmax, _softmax_formula),
             A._log_softmax: _softmax_kernel(A._log_softmax, _log_softmax_formula),
             A._softmax_backward_data: _softmax_backward,
             A._log_softmax_backward_data: _log_softmax_backward,
             SC.index_select: index_select, DN.embedding: embedding, SH.cat: cat,
             RED.sum: sum_dim, RED.mean: mean_dim, L.mm: mm, L.bmm: bmm, L.addmm: addmm}
    for name, formula in UNARY.items():
        fn = _formula(formula)
        for op in (getattr(P, name), getattr(P, name + "_", None)):
            if op is not None:
                table[op] = _unary(op, fn)
    for name, formula in BINARY.items():
        fn = _formula(formula)
        for op in (getattr(P, name), getattr(P, name + "_", None)):
            if op is not None:
                table[op] = _binary(op, fn)
    for name, fn in (("add", _add), ("sub", _sub)):
        table[getattr(P, name)] = _binary(getattr(P, name), fn, alpha=True)
        table[getattr(P, name + "_")] = _binary(getattr(P, name + "_"), fn, alpha=True)
    for name in COMPARISONS:
        fn = _formula(name)
        table[getattr(P, name)] = _binary(getattr(P, name), fn, compare=True)
        table[getattr(P, name + "_")] = _binary(getattr(P, name + "_"), fn, compare=True)
    for op, kind in ((RED.amax, "max"), (RED.amin, "min")):
        table[op] = _extreme(op, kind)
    for op, kind in ((RED.max, "max"), (RED.min, "min")):
        table[op] = _full_extreme(op, kind)
    for op, kind in ((RED.max_dim, "argmax"), (RED.min_dim, "argmin")):
        table[op] = _extreme_dim(op, kind)
    for op, kind in ((RED.argmax, "argmax"), (RED.argmin, "argmin")):
        table[op] = _arg(op, kind)
    return table


backend.register(kernels())
