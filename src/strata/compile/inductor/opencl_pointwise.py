"""The OpenCL device's launch helpers, pointwise kernels and copies (loop IR -> oclprinter.py).

An op's OpenCL kernel runs the op's meta function (validation, output shape and dtype),
allocates its outputs through the device's caching allocator, builds a loop-IR ``Kernel`` whose
sizes, strides and offsets are runtime arguments, prints it once per structure (op, rank,
dtypes: ``launch``) and enqueues it on the current stream without waiting. opencl_rows.py holds
the kernels with an inner loop (reductions, softmax, indexing, matrix products) and
opencl_kernels.py the table.
"""

import functools

import numpy as np

from ..._tensor import from_array
from ...backends.cpu import kernel_table as cpu_kernels
from ...backends.cpu.array import data
from ...backends.opencl import runtime as R
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...core.tensor_impl import TensorImpl
from ...ops import factory as F
from ...ops import pointwise as P
from ...ops import shape as SH
from ...ops.meta_rules import promote, type_name
from . import eager
from .ir import InputBuffer, Kernel, Pointwise, ops
from .oclprinter import CL_TYPES, print_kernel
from .opencl_lane import PointwiseLane

_sources = {}         # structural key -> (source, parameter names)
_plans = {}           # structural key -> (source, kernel name, parameter names or places)
_CPU_COPY = cpu_kernels()[F.copy_]


def runtime_of(tensor=None):
    index = 0 if tensor is None else (tensor.device.index or 0)
    return R.get(index)


def is_device(x):
    return isinstance(x, TensorImpl) and x.device.type == "opencl"


def scalar_value(x, device):
    """A Python number, or a 0-dim CPU tensor (PyTorch lets those mix with any device)."""
    if isinstance(x, TensorImpl):
        if x.device.type != "cpu" or x.ndim:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {device} and {x.device}!")
        return x.item()
    return x


def scalar_argument(value, dtype):
    """A Python number as a kernel argument of ``dtype``; integers out of its range wrap
    around, as PyTorch wraps them (``uint8 - 1`` subtracts 255). A half dtype computes in
    float (oclprinter's Note [Half dtypes]): the number is passed as a float, not rounded to
    half first, as the CPU device computes."""
    if dtype in (D.float16, D.bfloat16):
        return np.float32(value)
    if dtype.is_floating_point and isinstance(value, (float, np.floating)):
        return dtype.np.type(value)      # rounds as the conversion below does, keeps -0.0
    return _converted(value, dtype.np)


@functools.lru_cache(maxsize=1024, typed=True)
def _converted(value, np_dtype):
    """The NumPy conversion, cached: the same few numbers recur every step (no float meets a
    floating dtype here, so -0.0 never finds the cache's 0.0)."""
    return np.array(value).astype(np_dtype)[()]


def new_output(spec, tensor_like):
    shape = tuple(spec.shape)
    return runtime_of(tensor_like).empty(shape, contiguous_strides(shape), spec.dtype)


def broadcast_strides(t, rank, flat):
    """The runtime stride values of ``t`` broadcast to ``rank`` dims (one dim if ``flat``)."""
    if flat:
        return (1,)
    pad, strides, shape = rank - len(t._shape), t._get_strides(), t._shape
    return tuple(0 if d < pad or shape[d - pad] == 1 else strides[d - pad]
                 for d in range(rank))


def all_contiguous(tensors, out):
    """True when every tensor has the output's shape and contiguous strides: run flat."""
    shape = tuple(out._shape)
    want = contiguous_strides(shape)
    return all(tuple(t._shape) == shape and tuple(t._get_strides()) == want
               for t in (*tensors, out))


def kernel_name(op_name):
    return "k_" + op_name.removeprefix("aten::").replace(".", "_")   # never a builtin


def launch(op_name, key, build, values, tensors, global_size, rt, local_size=None, names=None):
    """Print ``build()`` once per ``key``, then launch with ``values``: {param: value}, or a
    list in the order of ``names()`` (the same for every launch of a key: where each kernel
    parameter sits in it is worked out once, Note [Argument plans]); returns that plan
    (source, kernel name, the value index of each parameter). Raises NotImplementedError for
    dtypes without OpenCL kernels before anything is built or enqueued."""
    for t in tensors:
        if t.dtype.name not in CL_TYPES:
            raise NotImplementedError(f"\"{op_name}\" not implemented for "
                                      f"'{type_name(t.dtype)}' on the 'OpenCL' backend")
    plan = _plans.get(key)
    if plan is None:
        plan = _plan(op_name, key, build, tensors, names)
    source, name, order = plan
    if names is None:
        args = [values[param] for param in order]
    else:
        args = [values[i] for i in order]
    rt.launch(op_name, source, name, global_size, args, tensors, local_size)
    return plan


def _plan(op_name, key, build, tensors, names):
    """(source, kernel name, the order of the arguments) of ``key``, made on its first
    launch."""
    entry = _sources.get(key)
    if entry is None:
        entry = _sources[key] = build()
    source, params = entry
    if names is not None:
        listed = names()
        params = [listed.index(name) for name in params]
    plan = _plans[key] = (source, kernel_name(op_name), params)
    return plan


# Note [Argument plans]: a launch lists its argument values in a fixed order (a pointwise
# kernel: each operand's buffer, offset and strides, the output's, the sizes) rather than in a
# dict by name; a ``names()`` function gives that order's names on a key's first launch and
# ``launch`` keeps, per key, where each kernel parameter sits in it. Per launch, only the values
# are gathered (no names are formatted), and the key is hashed once. The row, GEMM, window and
# loss kernels list theirs with ``tensor_values`` and ``tensor_names``.


def tensor_values(rt, t, strides=None):
    """A tensor's kernel arguments: its buffer, its offset, its strides (or ``strides``)."""
    return [*rt.buffer_of(t), *(t._get_strides() if strides is None else strides)]


def tensor_names(name, rank):
    """The parameter names of ``tensor_values``: ``name, name_off, name_st0, ...``."""
    return [name, f"{name}_off", *(f"{name}_st{d}" for d in range(rank))]

class _Layout:
    """What a pointwise launch's arguments look like, a function of its operands' dtypes,
    shapes and strides only: each operand's runtime strides (None: a number, converted to
    ``dtypes[i]``), the output's strides and sizes, the work-items, the kernel's key."""

    __slots__ = ("dtypes", "key", "kinds", "numel", "out_tail", "rank", "strides")

    def __init__(self, op_name, formula, operands, out):
        tensors = [v for v, _ in operands if is_device(v)]
        flat = all_contiguous(tensors, out)
        rank = self.rank = 1 if flat else len(out._shape)
        kinds, self.strides, self.dtypes = [], [], []
        for v, dt in operands:
            if is_device(v):
                self.strides.append(broadcast_strides(v, rank, flat))
                kinds.append(("t", v.dtype.name, dt.name))   # broadcast dims: a stride 0
            else:
                self.strides.append(None)
                kinds.append(("s", dt.name))
            self.dtypes.append(dt)
        self.numel = out.numel()
        self.out_tail = ((1,) if flat else tuple(out._get_strides())) + \
            ((self.numel,) if flat else tuple(out._shape))
        self.kinds = kinds = tuple(kinds)
        self.key = (op_name, formula, rank, kinds, out.dtype.name)

    def values(self, rt, operands, out):
        """The launch's argument values in ``_value_names``' order."""
        values = []
        for v, strides, dt in zip(operands, self.strides, self.dtypes):
            if strides is None:
                values.append(scalar_argument(scalar_value(v, out.device), dt))
            else:
                values += rt.buffer_of(v)
                values += strides
        values += rt.buffer_of(out)
        values += self.out_tail
        return values


def pointwise(op_name, formula, operands, out, layout=None):
    """``out[i] = formula(*operands at i, cast to compute dtypes)``, broadcasting operands.

    ``operands``: (value, compute dtype) pairs; a value is an opencl tensor or a number.
    Returns ``out``; ``layout`` (if given, a list) receives the launch's ``_Layout``, its
    operands' values and its argument plan."""
    rt = runtime_of(out)
    shape = _Layout(op_name, formula, operands, out)
    values = shape.values(rt, [v for v, _ in operands], out)
    kinds, rank = shape.kinds, shape.rank

    def build():
        inputs, scalars, loads = [], set(), []
        for i, kind in enumerate(kinds):
            name = f"in{i}"
            if kind[0] == "t":
                _, dt, cdt = kind
                stride = tuple(f"{name}_st{d}" for d in range(rank))
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
        return print_kernel(Kernel(kernel_name(op_name), inputs, [node]), ranges,
                            {"out0": layout}, frozenset(scalars))
    tensors = [v for v, _ in operands if is_device(v)]
    tensors.append(out)
    launch(op_name, shape.key, build, values, tensors, shape.numel, rt,
           names=lambda: _value_names(kinds, rank))
    if layout is not None:
        layout += (shape, [v for v, _ in operands], _plans[shape.key])
    return out


def _value_names(kinds, rank):
    """The parameter names of ``pointwise``'s values, in the order it lists them."""
    names = []
    for i, kind in enumerate(kinds):
        names.append(f"in{i}")
        if kind[0] == "t":
            names += [f"in{i}_off", *(f"in{i}_st{d}" for d in range(rank))]
    names += ["out0", "out0_off", *(f"out0_st{d}" for d in range(rank))]
    return names + [f"s{d}" for d in range(rank)]


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
        return fill_(out, args[value_position])
    return kernel


def _clone(self, memory_format=None, layout=None):
    """A copy with the layout the meta function chose (``preserve_format`` keeps dense
    strides)."""
    spec = F.clone.meta(self, memory_format)
    shape = tuple(spec.shape)
    strides = spec.strides if spec.strides is not None else contiguous_strides(shape)
    out = runtime_of(self).empty(shape, tuple(strides), spec.dtype)
    return pointwise("aten::clone", identity, [(self, self.dtype)], out, layout)


def reshape_copy(self, size):
    """``reshape`` of a layout no view can express: a contiguous copy in the new shape (the
    elements in row-major order of ``self``)."""
    spec = SH._reshape_copy.meta(self, size)
    out = runtime_of(self).empty(tuple(self._shape), contiguous_strides(tuple(self._shape)),
                                 self.dtype)
    pointwise("aten::_reshape_copy", identity, [(self, self.dtype)], out)
    return out.view(tuple(spec.shape))


def _gelu(self, approximate="none", layout=None):
    """The eager CPU kernels' formula (compile/inductor/eager.py), printed for OpenCL."""
    spec = P.gelu.meta(self, approximate)
    name = "gelu_tanh" if approximate == "tanh" else "gelu"
    return pointwise("aten::gelu", GELU[name], [(self, spec.dtype)], new_output(spec, self),
                     layout)


def gelu_(self, approximate="none"):
    """In place: each element read and written by the same work-item."""
    P.gelu_.meta(self, approximate)
    name = "gelu_tanh" if approximate == "tanh" else "gelu"
    pointwise("aten::gelu_", GELU[name], [(self, self.dtype)], self)
    return self


def _gelu_formula(name):
    def formula(x):
        return eager.FORMULAS[name](x, x.dtype)
    return formula


GELU = {name: _gelu_formula(name) for name in ("gelu", "gelu_tanh")}


def silu(x):
    """The eager CPU kernel's formula, printed for OpenCL."""
    return eager.FORMULAS["silu"](x, x.dtype)


def pow_(op):
    """``pow``: ``x * x`` for a Python exponent 2 (as ATen special-cases it), ``sqrt`` for 0.5,
    else OpenCL's ``pow``; integer results by squaring (oclprinter's IPOW)."""
    def kernel(self, exponent):
        spec = op.meta(self, exponent)
        out = self if spec is self else new_output(spec, self if is_device(self) else exponent)
        special = POW_SPECIAL.get(exponent) if type(exponent) in (int, float) else None
        if special is not None:
            return pointwise(op.qualname, special, [(self, out.dtype)], out)
        return pointwise(op.qualname, POW, [(self, out.dtype), (exponent, out.dtype)], out)
    return kernel


def _square(x):
    return ops.mul(x, x)


def _sqrt(x):
    return ops.sqrt(x)


def _pow(x, e):
    return ops.pow(x, e)


POW, POW_SPECIAL = _pow, {2: _square, 0.5: _sqrt}


def identity(x):
    return x


def copy_(self, src, non_blocking=False):
    """Every copy with an opencl side: device<->device (a pointwise kernel that converts dtype
    and broadcasts), host->device (an upload, then a kernel if the layout or dtype differs),
    device->host (a kernel to a contiguous buffer if needed, then a download)."""
    F.copy_.meta(self, src, non_blocking)
    if is_device(self) and is_device(src):
        if self.device != src.device:
            raise RuntimeError("copies between two OpenCL devices are not supported yet")
        return pointwise("aten::copy_", identity, [(src, self.dtype)], self)
    if is_device(self):
        rt = runtime_of(self)
        # a non-blocking upload from memory that is not pinned goes through a pinned staging
        # block (runtime.upload), so writes to ``src`` after this call cannot change what arrives
        view = data(src)
        host = np.ascontiguousarray(view)
        source = src if host is view else None      # None: a copy, so not pinned memory
        if src.dtype == self.dtype and tuple(src._shape) == tuple(self._shape) and \
                all_contiguous((), self):
            rt.upload(self, host, non_blocking, source)
            return self
        staged = rt.empty(tuple(src._shape), contiguous_strides(src._shape), src.dtype)
        rt.upload(staged, host, non_blocking, source)
        return pointwise("aten::copy_", identity, [(staged, self.dtype)], self)
    rt = runtime_of(src)
    if not all_contiguous((), src):
        src = pointwise("aten::copy_", identity, [(src, src.dtype)],
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


# --- pointwise ops --------------------------------------------------------------------------------

def unary(op, fn):
    lane = PointwiseLane(op.qualname)

    def kernel(self, *extra):
        sig = None if op.is_inplace else lane.signature((self, *extra))
        if sig is not None:
            out = lane.run(sig, (self,))
            if out is not None:
                return out
        spec = op.meta(self, *extra)
        out = self if spec is self else new_output(spec, self)
        # predicates (isnan, isinf, ...) look at the input, not at it converted to bool; abs
        # of a complex input is real
        compute = self.dtype if spec is self or spec.dtype == D.bool_ or \
            self.dtype.is_complex else spec.dtype
        layout = []
        pointwise(op.qualname, fn, [(self, compute)], out, layout)
        if sig is not None and out is not self:
            lane.remember(sig, runtime_of(out), out, *layout)
        return out
    return kernel


def binary(op, fn, compare=False, alpha=False):
    lane = PointwiseLane(op.qualname)

    def kernel(self, other, *extra):
        sig = None if op.is_inplace else lane.signature((self, other, *extra))
        if sig is not None:
            out = lane.run(sig, (self, other, extra[0] if extra else 1) if alpha else
                           (self, other))
            if out is not None:
                return out
        spec = op.meta(self, other, *extra)
        out = self if spec is self else new_output(spec, self if is_device(self) else other)
        compute = promote(self, other) if compare else out.dtype
        operands = [(self, compute), (other, compute)]
        if alpha:
            operands.append((extra[0] if extra else 1, compute))
        layout = []
        pointwise(op.qualname, fn, operands, out, layout)
        if sig is not None and out is not self:
            lane.remember(sig, runtime_of(out), out, *layout)
        return out
    return kernel


def _where(condition, self, other, layout=None):
    spec = P.where.meta(condition, self, other)
    out = new_output(spec, next(t for t in (condition, self, other) if is_device(t)))
    return pointwise("aten::where.self", where_formula, [(condition, D.bool_), (self, spec.dtype),
                                                     (other, spec.dtype)], out, layout)


def laned(op_name, fn):
    """``fn(*args, layout=[])``, an out-of-place op that ends in one ``pointwise`` launch
    whose tensor operands are its tensor arguments in order, with a pointwise lane (Note
    [Pointwise lane])."""
    lane = PointwiseLane(op_name)

    def kernel(*args):
        sig = lane.signature(args)
        if sig is not None:
            out = lane.run(sig, args)
            if out is not None:
                return out
        layout = []
        out = fn(*args, layout=layout)
        if sig is not None and layout and _same_tensors(args, layout[1]):
            lane.remember(sig, runtime_of(out), out, *layout)
        return out
    return kernel


def _same_tensors(args, operands):
    """Whether the device tensors of ``args`` are those of ``operands``, in order."""
    given, used = [a for a in args if is_device(a)], [v for v in operands if is_device(v)]
    return len(given) == len(used) and all(a is b for a, b in zip(given, used))


clone = laned("aten::clone", _clone)
gelu = laned("aten::gelu", _gelu)
where = laned("aten::where.self", _where)


def where_formula(c, a, b):
    return ops.where(c, a, b)


def backward_formula(op, name):
    """tanh/sigmoid/gelu/silu_backward: eager.py's formulas of (grad, x). The formulas are
    made once: a formula is part of its kernel's key."""
    formulas = {tanh: _backward_formula("gelu_tanh_backward" if tanh else name)
                for tanh in (False, True)}

    def kernel(grad_output, x, *approximate, layout=None):
        spec = op.meta(grad_output, x, *approximate)
        return pointwise(op.qualname, formulas[approximate == ("tanh",)],
                         [(grad_output, spec.dtype), (x, spec.dtype)],
                         new_output(spec, grad_output if is_device(grad_output) else x), layout)
    return laned(op.qualname, kernel)


def _backward_formula(name):
    formula = eager.BINARY_FORMULAS[name]

    def of(g, v):
        return formula(g, v, g.dtype)
    return of


def clamp(op):
    """clamp/clamp_ with either bound absent, a number or a tensor, as the CPU's: a tensor bound
    is NaN-propagating ``maximum``/``minimum``; a number bound replaces x only where it is
    strictly past it (x keeps its sign on a 0.0/-0.0 tie) and a NaN number bound gives NaN,
    as ATen's vectorised scalar kernel."""
    def kernel(self, min=None, max=None):
        spec = op.meta(self, min, max)
        out = self if spec is self else new_output(spec, self)
        compute = P.clamp.dtype_rule(*P.clamp_operands(self, min, max))
        bounds = tuple(b for b in (min, max) if b is not None)
        formula = CLAMP[_bound_kind(min), _bound_kind(max)]
        return pointwise(op.qualname, formula, [(v, compute) for v in (self, *bounds)], out)
    return kernel


def _bound_kind(bound):
    if bound is None:
        return None
    return "tensor" if isinstance(bound, TensorImpl) else "number"


def _clamped(x, bound, kind, low):
    if kind == "tensor":
        return ops.maximum(x, bound) if low else ops.minimum(x, bound)
    beyond = ops.lt(x, bound) if low else ops.lt(bound, x)
    return ops.where(ops.ne(bound, bound), bound, ops.where(beyond, bound, x))


def _clamp_formula(low_kind, high_kind):
    def formula(x, *bounds):
        bounds = list(bounds)
        if low_kind is not None:
            x = _clamped(x, bounds.pop(0), low_kind, True)
        if high_kind is not None:
            x = _clamped(x, bounds.pop(0), high_kind, False)
        return x
    return formula


# (min's kind, max's kind) -> formula; kinds None, "number", "tensor"
CLAMP = {(low, high): _clamp_formula(low, high) if (low, high) != (None, None) else identity
         for low in (None, "number", "tensor") for high in (None, "number", "tensor")}


def fill_(self, value):
    F.fill_.meta(self, value)
    return pointwise("aten::fill_.Scalar", identity, [(value, self.dtype)], self)


def math_formula(name):
    def formula(*args):
        return getattr(ops, name)(*args)
    formula.__name__ = name
    return formula


def add_formula(a, b, alpha):
    return ops.add(a, ops.mul(b, alpha))


def sub_formula(a, b, alpha):
    return ops.sub(a, ops.mul(b, alpha))


UNARY = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin",
    "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "sigmoid": "sigmoid", "reciprocal": "reciprocal", "abs": "abs", "neg": "neg", "relu": "relu",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "logical_not": "logical_not",
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "signbit": "signbit",
    "sign": "sign", "frac": "frac", "bitwise_not": "bitwise_not",
}
BINARY = {"mul": "mul", "div": "truediv", "maximum": "maximum", "minimum": "minimum",
          "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
          "atan2": "atan2", "copysign": "copysign", "hypot": "hypot", "fmax": "fmax",
          "fmin": "fmin", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
          "bitwise_xor": "bitwise_xor", "bitwise_left_shift": "bitwise_left_shift",
          "bitwise_right_shift": "bitwise_right_shift"}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
