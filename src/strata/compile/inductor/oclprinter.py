"""The OpenCL printer: one ``Kernel`` of the loop IR (ir.py) -> one OpenCL C ``__kernel``.

The C printer (cprinter.py) is the base, as in tinygrad's ``renderer/cstyle.py``: the handler
differs in a few lines (OpenCL's type names, overloaded math functions, ``bool`` buffers stored
as ``uchar``, scalars passed by value) and the loop becomes the ND range::

    __kernel void add_2(__global const float* restrict in0, const long in0_off, ...,
                        __global float* restrict out0, const long out0_off, ..., const long s0) {
      const long x = get_global_id(0);              // one work-item per outer index
      if (x >= s0 * s1) return;
      const long i0 = x / (s1); const long i1 = (x) % s1;
      <each node in order; a reduction is a loop over its reduction ranges>
      out0[out0_off + i0*out0_st0 + i1*out0_st1] = t5;
    }

Sizes, strides and offsets are runtime arguments (names in the IR), so one program serves every
shape of a given rank and dtype: PoCL compiles each program with LLVM, which costs far more than
a launch. A reduction runs one work-item per output element, or with ``group`` one work-group per
output row with a tree in local memory (Note [Work-group reductions]). Besides the IR's
``sum/prod/max/min``, the reduction types ``argmax`` and
``argmin`` keep the first index of the extreme (a NaN counts as the extreme, as in ATen) and
expose the value as ``<name>_value``.
"""

from .cprinter import CHandler, CValue, _index_vars, _literal, prod
from .half import HALF
from .ir import Reduction, use_handler
from .opencl_complex import PART, ComplexRules, reduction_rules
from .opencl_complex import helpers_for as complex_helpers_for
from .opencl_special import helpers_for

# Note [Half dtypes] (half.py), in OpenCL: a load widens (float16: ``vload_half``, which needs
# no cl_khr_fp16; bfloat16: the top 16 bits of a float), a store rounds to nearest even
# (``vstore_half_rte``; bfloat16 by ``bf16_round`` below, NaN kept quiet). So a half value in
# the IR is a ``float`` variable, its buffer a ``ushort`` pointer, and a half scalar argument a
# ``float``.
CL_TYPES = {
    "float32": "float", "float64": "double", "int64": "long", "int32": "int", "int16": "short",
    "int8": "char", "uint8": "uchar", "bool": "bool", "float16": "float", "bfloat16": "float",
    "complex64": "float2", "complex128": "double2",     # opencl_complex.py
}
# a kernel argument cannot point to bool; half values are stored as their 16 bits
BUFFER_TYPES = {**CL_TYPES, "bool": "uchar", "float16": "ushort", "bfloat16": "ushort"}
SCALAR_TYPES = {**BUFFER_TYPES, "float16": "float", "bfloat16": "float"}
FLOATING = frozenset(("float16", "bfloat16", "float32", "float64"))
MATH = frozenset((
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "floor", "ceil",
    "trunc", "rint", "lgamma"))
MATH2 = frozenset(("atan2", "copysign", "hypot", "fmod"))
BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
INIT = {
    ("sum", "f"): "0", ("sum", "i"): "0", ("prod", "f"): "1", ("prod", "i"): "1",
    ("max", "f"): "-INFINITY", ("min", "f"): "INFINITY",
}
# an integer max/min starts from its own type's limits (LONG_MIN would truncate to 0 in an int)
INTEGER_LIMITS = {"long": ("LONG_MIN", "LONG_MAX"), "int": ("INT_MIN", "INT_MAX"),
                  "short": ("SHRT_MIN", "SHRT_MAX"), "char": ("CHAR_MIN", "CHAR_MAX"),
                  "uchar": ("0", "UCHAR_MAX"), "bool": ("false", "true")}
PREAMBLE = """typedef long int64_t;     /* the C printer's index variables */
#define MAX_PROP(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))
#define MIN_PROP(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
"""
FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
# round to nearest even on the bits (c10::BFloat16's round_to_nearest_even); a NaN stays a NaN
BF16_ROUND = """ushort bf16_round(const float v) {
    const uint u = as_uint(v);
    if (v != v)
        return (ushort)((u >> 16) | 0x40);
    return (ushort)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
"""
# a float rounded to a half value and widened back: a cast to a half dtype inside a kernel
F16_ROUND = """float f16_round(const float v) {
    ushort h;
    vstore_half_rte(v, 0, (__private half*)&h);
    return vload_half(0, (const __private half*)&h);
}
"""


def load_expr(dtype, pointer, index) -> str:
    """The value of ``pointer[index]`` as its compute type (Note [Half dtypes])."""
    if dtype == "float16":
        # inf and NaN widened on the bits: NVIDIA's vload_half returns one canonical NaN for
        # every NaN (seen on an H200), where PyTorch keeps the sign and the payload and sets
        # the quiet bit (as x86's F16C conversion does)
        bits = f"({pointer})[{index}]"
        return (f"((({bits} & 0x7C00) == 0x7C00) ? as_float(((uint)({bits} & 0x8000) << 16) | "
                f"0x7F800000 | ((uint)({bits} & 0x3FF) << 13) | "
                f"(({bits} & 0x3FF) ? 0x400000u : 0u)) : "
                f"vload_half({index}, (const __global half*)({pointer})))")
    if dtype == "bfloat16":
        return f"as_float((uint)({pointer})[{index}] << 16)"
    return f"{pointer}[{index}]"


def store_statement(dtype, pointer, index, value) -> str:
    """``pointer[index] = value;``, rounding a half value (Note [Half dtypes])."""
    if dtype == "float16":
        return f"vstore_half_rte({value}, {index}, (__global half*)({pointer}));"
    if dtype == "bfloat16":
        return f"({pointer})[{index}] = bf16_round({value});"
    return f"{pointer}[{index}] = {value};"


def with_helpers(source) -> str:
    """``source`` with the helper functions it calls defined first."""
    source = complex_helpers_for(source) + helpers_for(source) + source
    if "f16_round(" in source:
        source = F16_ROUND + source
    return (BF16_ROUND + source) if "bf16_round(" in source else source
# Note [Philox]: counter-based random numbers (Salmon et al., "Parallel random numbers: as easy
# as 1, 2, 3", SC 2011; Random123's philox4x32-10, the generator of PyTorch's CUDA kernels).
# Element i of a launch encrypts the counter (i, launch offset) under the 64-bit key (the
# seed): no state is shared between work-items, and a seed gives the same numbers on every
# device and work-group size. Hand-written: the IR has no 32-bit multiply-high.
PHILOX = """uint4 philox(const long key, const long offset, const long i) {
    uint4 c = (uint4)((uint)i, (uint)((ulong)i >> 32), (uint)offset,
                      (uint)((ulong)offset >> 32));
    uint2 k = (uint2)((uint)key, (uint)((ulong)key >> 32));
    for (int r = 0; r < 10; r++) {
        const uint hi0 = mul_hi(0xD2511F53U, c.x), lo0 = 0xD2511F53U * c.x;
        const uint hi1 = mul_hi(0xCD9E8D57U, c.z), lo1 = 0xCD9E8D57U * c.z;
        c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k += (uint2)(0x9E3779B9U, 0xBB67AE85U);
    }
    return c;
}
float philox_uniform_float32(const uint4 r) { return (r.x >> 8) * 0x1.0p-24f; }
float philox_normal_float32(const uint4 r) {
    const float u = 1.0f - philox_uniform_float32(r), v = (r.y >> 8) * 0x1.0p-24f;
    return sqrt(-2.0f * log(u)) * cospi(2.0f * v);
}
ulong philox_bits(const uint4 r) { return ((ulong)r.y << 32) | r.x; }
"""
# Integer powers as ATen's powi: by squaring, wrapping like the CPU's (unsigned arithmetic, then
# the result's type); a negative exponent leaves 1 for 1, +-1 for -1, else 0.
IPOW = """long ipow(const long base, const long exponent) {
    if (exponent < 0)
        return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;
    ulong result = 1, b = (ulong)base;
    for (ulong e = (ulong)exponent; e; e >>= 1) {
        if (e & 1)
            result *= b;
        b *= b;
    }
    return (long)result;
}
"""
PHILOX_FP64 = """double philox_uniform_float64(const uint4 r) {
    return (double)(((ulong)r.x << 21) ^ (r.y >> 11)) * 0x1.0p-53;
}
double philox_normal_float64(const uint4 r) {
    const double u = 1.0 - philox_uniform_float64(r);
    const double v = (double)(((ulong)r.z << 21) ^ (r.w >> 11)) * 0x1.0p-53;
    return sqrt(-2.0 * log(u)) * cospi(2.0 * v);
}
"""


def literal(value, dtype) -> str:
    """The C printer's literal, with OpenCL's integer type names (half values are floats)."""
    if dtype in HALF:
        return _literal(value, "float32")
    if dtype == "bool" or dtype in FLOATING:
        return _literal(value, dtype)
    return f"((long){int(value)}L)" if dtype == "int64" else f"(({CL_TYPES[dtype]}){int(value)})"


class OpenCLHandler(CHandler):
    """``ops.*`` for OpenCL C; names in ``scalars`` are kernel arguments passed by value."""

    types = CL_TYPES
    literal = staticmethod(literal)

    def __init__(self, buffers, lines, indent, aliases, scalars):
        super().__init__(buffers, lines, indent, aliases)
        self.scalars = scalars

    def _math(self, fn, x):
        return self._emit(f"{fn}({x})", x.dtype)    # OpenCL's math functions are overloaded

    def load(self, name, index):
        dtype = self.buffers.get(name)
        if name in self.scalars and name not in self.aliases:
            return CValue(name, dtype)
        if dtype in HALF and name not in self.aliases:
            return self._emit(load_expr(dtype, name, index), dtype)
        return super().load(name, index)

    def abs(self, x):
        return self._math("fabs", x) if _floating(x) else super().abs(x)

    def to_dtype(self, x, dtype):
        if dtype == "bool":
            return self._emit(f"{x} != 0", dtype)
        if dtype == "float16":      # rounded here, as a store would round it
            return self._emit(f"f16_round((float)({x}))", dtype)
        if dtype == "bfloat16":
            return self._emit(f"as_float((uint)bf16_round((float)({x})) << 16)", dtype)
        return super().to_dtype(x, dtype)

    def logical_not(self, x):
        return self._emit(f"!{x}", "bool")

    def logical_and(self, a, b):
        return self._emit(f"{a} && {b}", "bool")

    def logical_or(self, a, b):
        return self._emit(f"{a} || {b}", "bool")

    def pow(self, a, b):
        if not _floating(a):                    # IPOW
            return self._emit(f"({CL_TYPES[a.dtype]})ipow((long){a}, (long){b})", a.dtype)
        return self._emit(f"pow({a}, {b})", a.dtype)

    def isnan(self, x):
        return self._emit(f"{x} != {x}", "bool")

    def isinf(self, x):
        return self._emit(f"isinf({x}) != 0" if _floating(x) else "false", "bool")

    def isfinite(self, x):
        return self._emit(f"isfinite({x}) != 0" if _floating(x) else "true", "bool")

    def signbit(self, x):
        return self._emit(f"signbit({x}) != 0" if _floating(x) else f"{x} < 0", "bool")

    def sign(self, x):
        t = CL_TYPES[x.dtype]
        if x.dtype == "bool":
            return x
        return self._emit(f"({t})(({x} > 0) - ({x} < 0))", x.dtype)     # NaN -> 0, as ATen

    def special(self, name, x, *more):
        """One of opencl_special.py's functions (``erfinv``, ``i0``, ``entr``, ``zeta``,
        ``igamma``, ...) of ``x`` and any further arguments of its type."""
        return self._emit(f"{name}_{CL_TYPES[x.dtype]}({', '.join(map(str, (x, *more)))})",
                          x.dtype)

    def frexp(self, x, part):
        """``part`` "mantissa" (in [0.5, 1), x's dtype) or "exponent" (int32) of OpenCL's
        ``frexp``: x = mantissa * 2^exponent (inf and NaN keep their value, exponent 0)."""
        n = self.count
        self.count += 1
        self.lines.append(f"{self.indent}int e{n};")
        mantissa = self._emit(f"frexp({x}, &e{n})", x.dtype)
        return mantissa if part == "mantissa" else self._emit(f"e{n}", "int32")

    def polygamma(self, n, x):
        """``n`` an int64 value (a kernel argument: one program serves every order)."""
        return self._emit(f"polygamma_{CL_TYPES[x.dtype]}({n}, {x})", x.dtype)

    def frac(self, x):
        return self._emit(f"{x} - trunc({x})", x.dtype)

    def bitwise_not(self, x):
        return self._emit(f"!{x}" if x.dtype == "bool" else f"~{x}", x.dtype)

    def logical_xor(self, a, b):
        return self._emit(f"({a} != 0) != ({b} != 0)", "bool")

    def bitwise_left_shift(self, a, b):
        """0 when shifting by the width or more, or by a negative amount, as ATen."""
        bits = _BITS[a.dtype]
        return self._emit(f"({b} < 0 || {b} >= {bits}) ? 0 : {a} << {b}", a.dtype)

    def bitwise_right_shift(self, a, b):
        """Shifts past the width saturate: the sign fills signed types, zeros unsigned ones."""
        top = _BITS[a.dtype] - (0 if a.dtype == "uint8" else 1)
        return self._emit(f"{a} >> (({b} < 0 || {b} >= {top}) ? {top} : {b})", a.dtype)

    def fmax(self, a, b):
        return self._emit(f"{'fmax' if _floating(a) else 'max'}({a}, {b})", a.dtype)

    def fmin(self, a, b):
        return self._emit(f"{'fmin' if _floating(a) else 'min'}({a}, {b})", a.dtype)

    def tanh(self, x):
        """tanh, exactly +-1 where the float rounds to it: PoCL's tanh gives 1 - 2**-24 at
        infinity (OpenCL requires +-1), which turns gelu's inf * (1 - tanh^2) into inf, not
        NaN. |x| >= 9.1 (float) / 19.1 (double) is where correctly rounded tanh is +-1."""
        limit = "19.1" if x.dtype == "float64" else "9.1f"
        return self._emit(f"fabs({x}) >= {limit} ? copysign(({CL_TYPES[x.dtype]})1, {x}) : "
                          f"tanh({x})", x.dtype)

    def floor_divide(self, a, b):
        """Python's floor division of floats, as ATen's ``div_floor_floating``: from fmod, so
        that a / b rounding up to a whole number does not floor one too far."""
        t = CL_TYPES[a.dtype]
        rem = self._emit(f"fmod({a}, {b})", a.dtype)
        div = self._emit(f"({a} - {rem}) / {b}", a.dtype)
        div = self._emit(f"({rem} != 0 && ({b} < 0) != ({rem} < 0)) ? {div} - 1 : {div}",
                         a.dtype)
        low = self._emit(f"floor({div})", a.dtype)
        rounded = self._emit(f"{div} - {low} > ({t})0.5 ? {low} + 1 : {low}", a.dtype)
        whole = self._emit(f"{div} != 0 ? {rounded} : copysign(({t})0, {a} / {b})", a.dtype)
        return self._emit(f"{b} == 0 ? {a} / {b} : {whole}", a.dtype)

    def int_fmod(self, a, b):
        """C's ``%`` of integers (truncated, as ``fmod``), 0 for b = -1 and b = 0, where the
        hardware traps (LONG_MIN % -1 overflows; a zero divisor is refused on the host)."""
        t = CL_TYPES[a.dtype]
        minus_one = "" if a.dtype == "uint8" else f" || {b} == -1"
        return self._emit(f"({b} == 0{minus_one}) ? ({t})0 : ({t})({a} % {b})", a.dtype)

    def int_trunc_divide(self, a, b):
        """C's ``/`` of integers; b = -1 negates with wrap-around (LONG_MIN / -1 is LONG_MIN,
        as on the CPU, where the hardware would trap), b = 0 gives 0 (refused on the host)."""
        t = CL_TYPES[a.dtype]
        negate = "" if a.dtype == "uint8" else f"{b} == -1 ? ({t})(0UL - (ulong){a}) : "
        return self._emit(f"{b} == 0 ? ({t})0 : {negate}({t})({a} / {b})", a.dtype)

    def binary_search(self, value, length, right, boundary):
        """ATen's ``cus_lower_bound``/``cus_upper_bound``: the first position in
        [0, ``length``) whose boundary is not below ``value`` (``right``: not below or equal),
        by bisection; ``boundary(mid)`` emits the boundary at C expression ``mid``. A NaN
        compares false both ways, as in ATen (which is why this is no count of smaller
        boundaries: their answers differ when the boundaries hold NaN)."""
        n = self.count
        self.count += 1
        lo, hi, mid = f"lo{n}", f"hi{n}", f"mid{n}"
        self.lines += [f"{self.indent}long {lo} = 0, {hi} = {length};",
                       f"{self.indent}while ({lo} < {hi}) {{",
                       f"{self.indent}    const long {mid} = ({lo} + {hi}) / 2;"]
        outer, self.indent = self.indent, self.indent + "    "
        m = boundary(mid)
        below = f"!({m} > {value})" if right else f"!({m} >= {value})"
        self.lines += [f"{self.indent}if ({below}) {lo} = {mid} + 1; else {hi} = {mid};",
                       f"{outer}}}"]
        self.indent = outer
        return CValue(lo, "int64")

    def mod(self, a, b):
        """``a % b`` of integers (the caller makes ``a`` non-negative and ``b`` positive)."""
        return self._emit(f"{a} % {b}", a.dtype)

    def philox(self, key, offset, counter, kind, dtype):
        """A random number of element ``counter``: ``kind`` "uniform" in [0, 1) or "normal" as
        ``dtype``, or "bits" (64 random bits as int64). Note [Philox]."""
        words = f"t{self.count}"
        self.count += 1
        self.lines.append(f"{self.indent}const uint4 {words} = philox({key}, {offset}, "
                          f"{counter});")
        if kind == "bits":      # 63 bits: a non-negative long
            return self._emit(f"(long)(philox_bits({words}) >> 1)", "int64")
        drawn = "float32" if dtype in HALF else dtype        # half numbers are float draws
        return self._emit(f"philox_{kind}_{drawn}({words})", dtype)

    def __getattr__(self, name):
        if name in ("floor", "ceil", "trunc"):    # integers are already whole
            return lambda x: self._math(name, x) if _floating(x) else x
        if name in MATH:
            return lambda x: self._math(name, x)
        if name in MATH2:        # floating only (the ops' dtype rules promote integers)
            return lambda a, b: self._emit(f"{name}({a}, {b})", a.dtype)
        if name in BITWISE:
            return lambda a, b: self._emit(f"{a} {BITWISE[name]} {b}", a.dtype)
        return super().__getattr__(name)


_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _floating(x):
    return x.dtype in FLOATING


def _size_names(kernel, layouts):
    """The runtime ``long`` arguments of a kernel: sizes, strides and offsets (IR names)."""
    names = []

    def add(s):
        if isinstance(s, str) and s not in names:
            names.append(s)
    for node in kernel.nodes:
        for s in (*node.ranges, *getattr(node, "reduction_ranges", ())):
            add(s)
    for buffer in (*kernel.inputs, *layouts.values()):
        for s in (*buffer.stride, buffer.offset):
            add(s)
    return names


def print_kernel(kernel, outer_ranges, layouts, scalars=frozenset(), based=False, group=None):
    """(the OpenCL C source of ``kernel``, its parameter names in order).

    ``layouts`` maps each stored node's name to an ``InputBuffer`` giving where its element at
    an index goes (stride/offset names allowed); ``scalars`` are inputs passed by value. With
    ``based``, each buffer ``b`` also takes ``b_base``, an element offset added to its pointer
    (compiled graphs bake their layouts in, but a tensor starts anywhere in its segment).
    A node with more ranges than ``outer_ranges`` loops over the extra ones in its work-item.
    With ``group`` (a power of two), each outer index is one work-group of that many work-items
    and each reduction a tree (Note [Work-group reductions])."""
    buffers = {b.name: b.dtype for b in kernel.inputs}
    buffers.update({n.name: n.dtype for n in kernel.nodes})
    params, names, pointers = [], [], []
    for b in kernel.inputs:
        if b.name in scalars:        # a bool travels as uchar (no bool kernel arguments)
            params.append(f"const {SCALAR_TYPES[b.dtype]} {b.name}")
        else:
            params.append(f"__global const {BUFFER_TYPES[b.dtype]}* restrict {b.name}")
            pointers.append(b.name)
        names.append(b.name)
    for n in kernel.nodes:
        if n.name not in kernel.local:
            params.append(f"__global {BUFFER_TYPES[n.dtype]}* restrict {n.name}")
            names.append(n.name)
            pointers.append(n.name)
    if based:
        params += [f"const long {p}_base" for p in pointers]
        names += [f"{p}_base" for p in pointers]
    for name in _size_names(kernel, layouts):
        params.append(f"const long {name}")
        names.append(name)
    head = f"__kernel __attribute__((reqd_work_group_size({group}, 1, 1)))\n" if group else \
        "__kernel "
    lines = [f"{head}void {kernel.name}({', '.join(params)}) {{",
             f"    const long x = get_{'group' if group else 'global'}_id(0);",
             f"    if (x >= {prod(outer_ranges)}) return;"]
    if group:
        lines.append("    const int lid = get_local_id(0);")
    if based:
        lines += [f"    {p} += {p}_base;" for p in pointers]
    index, index_lines = _index_vars("i", outer_ranges, "x", " " * 4)
    lines.extend(index_lines)
    aliases = {}
    for node in kernel.nodes:
        _print_node(node, tuple(index), buffers, lines, aliases, scalars,
                    None if node.name in kernel.local else layouts[node.name], group)
    lines.append("}")
    dtypes = set(buffers.values())
    body = "\n".join(lines) + "\n"
    fp64 = "float64" in dtypes or "complex128" in dtypes or "philox_uniform_float64" in body or \
        "philox_normal_float64" in body
    if "philox(" in body:
        body = PHILOX + (PHILOX_FP64 if fp64 else "") + body
    if "ipow(" in body:
        body = IPOW + body
    text = PREAMBLE + with_helpers(body)
    return (FP64 + text if fp64 else text), names


class ComplexAwareHandler(ComplexRules, OpenCLHandler):
    """The handler kernels print with: complex values take opencl_complex.py's rules."""


def _handler(buffers, lines, indent, aliases, scalars):
    h = ComplexAwareHandler(buffers, lines, indent, aliases, scalars)
    h.count = len(lines)       # unique names across the nodes of one kernel
    return h


def _print_node(node, index, buffers, lines, aliases, scalars, layout, group=None):
    indent = " " * 4
    store = "if (lid == 0) " if group else ""      # one work-item writes a group's row
    if isinstance(node, Reduction):
        acc, body = f"acc_{node.name}", indent + "    "
        head = len(lines)
        lines.append("")       # the accumulator's declaration, once its dtype is known
        first, step = ("lid", group) if group else ("0", 1)
        lines.append(f"{indent}for (long y = {first}; y < {prod(node.reduction_ranges)}; "
                     f"y += {step}) {{")
        rindex, rlines = _index_vars("r", node.reduction_ranges, "y", body)
        lines.extend(rlines)
        with use_handler(_handler(buffers, lines, body, aliases, scalars)):
            value = node.inner_fn(index, tuple(rindex))
        kind = "f" if value.dtype in FLOATING else "i"
        ctype = CL_TYPES[value.dtype]
        if node.reduction_type in ("argmax", "argmin"):
            better = ">" if node.reduction_type == "argmax" else "<"
            lines[head] = f"{indent}{ctype} {acc} = 0; long {acc}_index = 0;"
            nan = f" || ({value} != {value} && {acc} == {acc})" if kind == "f" else ""
            lines.append(f"{body}if (y == 0 || {value} {better} {acc}{nan}) "
                         f"{{ {acc} = {value}; {acc}_index = y; }}")
            lines.append(f"{indent}}}")
            buffers[node.name + "_value"] = value.dtype
            aliases[node.name + "_value"] = acc
            result = f"{acc}_index"
        else:
            combine = _COMBINE[node.reduction_type]
            if value.dtype in PART:     # opencl_complex.py
                init, combine = reduction_rules(node.reduction_type, ctype)
                update = combine.format(a=value, b=acc)
            else:
                if kind == "i" and node.reduction_type in ("max", "min"):
                    init = INTEGER_LIMITS[ctype][node.reduction_type == "min"]
                else:
                    init = INIT[node.reduction_type, kind]
                update = {"sum": f"{acc} + {value}", "prod": f"{acc} * {value}",
                          "max": f"MAX_PROP({value}, {acc})",
                          "min": f"MIN_PROP({value}, {acc})"}[node.reduction_type]
            lines[head] = f"{indent}{ctype} {acc} = {init};"
            lines.append(f"{body}{acc} = {update};")
            lines.append(f"{indent}}}")
            if group:
                _tree(lines, indent, combine, acc, ctype, group)
            result = acc
        if layout is None:
            aliases[node.name] = result
        else:
            lines.append(f"{indent}{store}"
                         f"{store_statement(node.dtype, node.name, layout.index(index), result)}")
        return
    extra = tuple(node.ranges[len(index):])
    if extra:        # a row of a compiled graph's kernel: loop over the rest of the element
        lines.append(f"{indent}for (long y = 0; y < {prod(extra)}; y++) {{")
        indent += "    "
        rindex, rlines = _index_vars("r", extra, "y", indent)
        lines.extend(rlines)
        index = index + tuple(rindex)
    with use_handler(_handler(buffers, lines, indent, aliases, scalars)):
        value = node.inner_fn(index)
    if layout is None:
        aliases[node.name] = str(value)
    else:
        lines.append(f"{indent}{store}"
                     f"{store_statement(node.dtype, node.name, layout.index(index), value)}")
    if extra:
        lines.append(f"{indent[:-4]}}}")


# Note [Work-group reductions]: one work-group per output row. Each of its G work-items
# accumulates the elements y = lid, lid + G, ... of the row (neighbouring work-items read
# neighbouring elements: coalesced on a GPU), writes its partial result to local memory, and
# log2(G) halving steps combine them, a barrier after each; every work-item then reads the total
# (later nodes of the row use it) and work-item 0 stores. Additions run in a different order
# than the sequential loop, so float sums can differ in the last bits, as they do between
# PyTorch's CPU and CUDA kernels. NaN propagates through MAX_PROP/MIN_PROP as in the loop.
_COMBINE = {"sum": "{a} + {b}", "prod": "{a} * {b}", "max": "MAX_PROP({a}, {b})",
            "min": "MIN_PROP({a}, {b})"}


def _tree(lines, indent, combine, acc, ctype, group):
    part = f"part_{acc}"
    combined = combine.format(a=f"{part}[lid]", b=f"{part}[lid + s]")
    lines += [f"{indent}__local {ctype} {part}[{group}];",
              f"{indent}{part}[lid] = {acc};",
              f"{indent}barrier(CLK_LOCAL_MEM_FENCE);",
              f"{indent}for (int s = {group // 2}; s > 0; s >>= 1) {{",
              f"{indent}    if (lid < s) {part}[lid] = {combined};",
              f"{indent}    barrier(CLK_LOCAL_MEM_FENCE);",
              f"{indent}}}",
              f"{indent}{acc} = {part}[0];"]


# --- matrix products: a tiled GEMM --------------------------------------------------------------
# Not loop IR: the IR has no work-group, local memory or barrier. The design is CLBlast's "direct"
# GEMM (reference/opencl.md section 9) at its simplest: a TILE x TILE work-group stages a tile of
# A and of B in __local memory per step of K, and each work-item accumulates one output; bounds
# checks handle incomplete tiles, so no padding kernels run. Operands keep their strides.
TILE = 16
GEMM_PARAMS = ("a", "a_off", "a_stb", "a_stm", "a_stk", "b", "b_off", "b_stb", "b_stk", "b_stn",
               "out0", "out0_off", "out0_stb", "out0_stm", "out0_stn", "ms", "ns", "ks", "alpha")
BIAS_PARAMS = ("c", "c_off", "c_stm", "c_stn", "beta")


def print_gemm(name, dtype, bias) -> tuple:
    """(source, parameter names) of ``out0 = [beta * c +] alpha * a @ b`` over a 3-d ND range
    (columns, rows, batch) with TILE x TILE work-groups."""
    t, buf = CL_TYPES[dtype], BUFFER_TYPES[dtype]
    a_index, b_index = "i * a_stm + (k0 + lj) * a_stk", "(k0 + li) * b_stk + j * b_stn"
    params = [f"__global const {buf}* restrict a", "const long a_off", "const long a_stb",
              "const long a_stm", "const long a_stk", f"__global const {buf}* restrict b",
              "const long b_off", "const long b_stb", "const long b_stk", "const long b_stn",
              f"__global {buf}* restrict out0", "const long out0_off", "const long out0_stb",
              "const long out0_stm", "const long out0_stn", "const long ms", "const long ns",
              "const long ks", f"const {t} alpha"]
    result = _times(dtype, "alpha", "acc")
    if bias:
        params += [f"__global const {buf}* restrict c", "const long c_off", "const long c_stm",
                   "const long c_stn", f"const {t} beta"]
        bias_term = _times(dtype, "beta", load_expr(dtype, 'c', 'c_off + i * c_stm + j * c_stn'))
        result = f"{bias_term} + {result}"
    store = store_statement(dtype, "out0", "out0_off + batch * out0_stb + i * out0_stm + "
                            "j * out0_stn", result)
    source = f"""#define TILE {TILE}
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void {name}({", ".join(params)}) {{
    const int lj = get_local_id(0), li = get_local_id(1);
    const long j = get_group_id(0) * TILE + lj;      /* column of the output */
    const long i = get_group_id(1) * TILE + li;      /* row of the output */
    const long batch = get_global_id(2);
    __local {t} a_tile[TILE][TILE + 1];
    __local {t} b_tile[TILE][TILE + 1];
    a += a_off + batch * a_stb;
    b += b_off + batch * b_stb;
    {t} acc = 0;
    for (long k0 = 0; k0 < ks; k0 += TILE) {{
        a_tile[li][lj] = (i < ms && k0 + lj < ks) ? {load_expr(dtype, "a", a_index)} : 0;
        b_tile[li][lj] = (k0 + li < ks && j < ns) ? {load_expr(dtype, "b", b_index)} : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            acc += {_times(dtype, "a_tile[li][k]", "b_tile[k][lj]")};
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    if (i < ms && j < ns)
        {store}
}}
"""
    return _with_fp64(dtype, with_helpers(source)), \
        list(GEMM_PARAMS) + (list(BIAS_PARAMS) if bias else [])


def _times(dtype, a, b) -> str:
    """``a * b`` in the GEMMs: a complex product for complex dtypes (opencl_complex.py)."""
    return f"cmul_{CL_TYPES[dtype][:-1]}({a}, {b})" if dtype in PART else f"{a} * {b}"


def _with_fp64(dtype, source) -> str:
    """``source`` after the fp64 pragma where its dtype needs it (before the helpers)."""
    return (FP64 + source) if dtype in ("float64", "complex128") else source


# The register-blocked variant (Cedric Nugteren's "myGEMM" kernel 6, CLBlast's "xgemm" in its
# simplest form): a work-group of RTS x RTS work-items computes a BLOCK x BLOCK tile of the
# output, each work-item WPT x WPT of it (rows li + v * RTS, columns lj + w * RTS: neighbouring
# work-items still store neighbouring columns), so each value read from local memory feeds WPT
# multiply-adds instead of one. Chosen for outputs of at least BLOCK x BLOCK (opencl_rows.py).
BLOCK, WPT = 64, 4
RTS = BLOCK // WPT


def print_gemm_blocked(name, dtype, bias, vector=False, block=BLOCK, wpt=WPT) -> tuple:
    """(source, parameter names) of the register-blocked GEMM; the ND range is (columns / wpt,
    rows / wpt, batch), rounded up to rts x rts work-groups (rts = block / wpt, also the K step
    of a tile). With ``vector`` the tiles are loaded with ``vload4`` (rows of A and B
    contiguous, k and n multiples of 4: a vector is wholly inside the matrix or wholly
    outside)."""
    rts = block // wpt
    assert rts * wpt == block and block * rts % (4 * rts * rts) == 0, (block, wpt)
    source, names = print_gemm(name, dtype, bias)
    head = source.index("void ")
    params = source[source.index("(", head) + 1:source.index(") {", head)]
    t = CL_TYPES[dtype]
    result = _times(dtype, "alpha", "acc[v][w]")
    if bias:
        bias_term = _times(dtype, "beta", load_expr(dtype, 'c', 'c_off + i * c_stm + j * c_stn'))
        result = f"{bias_term} + {result}"
    store = store_statement(dtype, "out0", "out0_off + batch * out0_stb + i * out0_stm + "
                            "j * out0_stn", result)
    blocked = f"""#define BLOCK {block}
#define WPT {wpt}
#define RTS {rts}
#define TK {rts}
__kernel __attribute__((reqd_work_group_size(RTS, RTS, 1)))
void {name}({params}) {{
    const int lj = get_local_id(0), li = get_local_id(1);
    const long j0 = get_group_id(0) * BLOCK, i0 = get_group_id(1) * BLOCK;
    const long batch = get_global_id(2);
    __local {t} a_tile[BLOCK][TK + 1];
    __local {t} b_tile[TK][BLOCK + 1];
    a += a_off + batch * a_stb;
    b += b_off + batch * b_stb;
    {t} acc[WPT][WPT];
    for (int v = 0; v < WPT; v++)
        for (int w = 0; w < WPT; w++)
            acc[v][w] = 0;
    for (long k0 = 0; k0 < ks; k0 += TK) {{
{_vector_loads(dtype) if vector else _scalar_loads(dtype)}
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TK; k++) {{
            {t} b_reg[WPT];
            for (int w = 0; w < WPT; w++)
                b_reg[w] = b_tile[k][lj + w * RTS];
            for (int v = 0; v < WPT; v++) {{
                const {t} a_reg = a_tile[li + v * RTS][k];
                for (int w = 0; w < WPT; w++)
                    acc[v][w] += {_times(dtype, "a_reg", "b_reg[w]")};
            }}
        }}
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    for (int v = 0; v < WPT; v++) {{
        const long i = i0 + li + v * RTS;
        for (int w = 0; w < WPT; w++) {{
            const long j = j0 + lj + w * RTS;
            if (i < ms && j < ns)
                {store}
        }}
    }}
}}
"""
    return _with_fp64(dtype, with_helpers(blocked)), names


def _scalar_loads(dtype):
    a_value = load_expr(dtype, "a", "ai * a_stm + ak * a_stk")
    b_value = load_expr(dtype, "b", "bk * b_stk + bj * b_stn")
    return f"""        for (int l = 0; l < WPT; l++) {{
            const long ai = i0 + li + l * RTS, ak = k0 + lj;
            a_tile[li + l * RTS][lj] = (ai < ms && ak < ks) ? {a_value} : 0;
            const long bk = k0 + li, bj = j0 + lj + l * RTS;
            b_tile[li][lj + l * RTS] = (bk < ks && bj < ns) ? {b_value} : 0;
        }}"""


def _vload4(dtype, pointer) -> str:
    """Four values from ``pointer`` as a vector of the compute type."""
    if dtype == "float16":
        return f"vload_half4(0, (const __global half*)({pointer}))"
    if dtype == "bfloat16":
        return f"as_float4(convert_uint4(vload4(0, {pointer})) << 16)"
    return f"vload4(0, {pointer})"


def _vector_loads(dtype):
    """4-vectors of the A tile and of the B tile, BLOCK * TK / 4 of each shared out over the
    RTS * RTS work-items (one each when WPT is 4, two when it is 8)."""
    t = CL_TYPES[dtype]
    a_vector = _vload4(dtype, "a + ai * a_stm + ak")
    b_vector = _vload4(dtype, "b + bk * b_stk + bj")
    return f"""        for (int id = li * RTS + lj; id < BLOCK * TK / 4; id += RTS * RTS) {{
            const int ar = id / (TK / 4), ac = (id % (TK / 4)) * 4;
            const long ai = i0 + ar, ak = k0 + ac;
            const {t}4 av = (ai < ms && ak < ks) ? {a_vector} : ({t}4)(0);
            a_tile[ar][ac] = av.x; a_tile[ar][ac + 1] = av.y;
            a_tile[ar][ac + 2] = av.z; a_tile[ar][ac + 3] = av.w;
            const int br = id / (BLOCK / 4), bc = (id % (BLOCK / 4)) * 4;
            const long bk = k0 + br, bj = j0 + bc;
            const {t}4 bv = (bk < ks && bj < ns) ? {b_vector} : ({t}4)(0);
            b_tile[br][bc] = bv.x; b_tile[br][bc + 1] = bv.y;
            b_tile[br][bc + 2] = bv.z; b_tile[br][bc + 3] = bv.w;
        }}"""
