"""Complex numbers on the ``opencl`` device: ``complex64``/``complex128`` values are OpenCL's
``float2``/``double2`` (real part ``.x``, imaginary ``.y``), the layout of a complex tensor's
interleaved storage, so loads, stores, copies and ``+ -`` need nothing new.

``ComplexRules`` is mixed in before the OpenCL printer's handler: an ``ops.*`` call on complex
values prints a call to one of the helpers below (``cmul_float(a, b)``, ...), anything else
falls through to the real rules. The helpers follow ATen's complex formulas (c10/util/complex.h,
complex_math.h, the C library's ``cexp``/``csqrt``/``ctanh``): division scales by the larger
part of the divisor and ``abs`` is ``hypot``, so neither overflows where the result fits.
"""

from .cprinter import _literal

# complex dtype -> its part's C type; the vector type is that type with a 2
PART = {"complex64": "float", "complex128": "double"}
PART_DTYPE = {"complex64": "float32", "complex128": "float64"}
COMPLEX_FOR = {"float32": "complex64", "float64": "complex128"}

# T is the part's type, V its complex (T2); each helper is printed per type (helpers_for)
HELPERS = {
    "cmul": """V cmul_T(const V a, const V b) {
    return (V)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
""",
    "cdiv": """V cdiv_T(const V a, const V b) {        /* c10::complex's operator/= */
    const T abs_c = fabs(b.x), abs_d = fabs(b.y);
    if (abs_c >= abs_d) {
        if (abs_c == 0 && abs_d == 0)
            return (V)(a.x / abs_c, a.y / abs_d);
        const T rat = b.y / b.x, scl = 1 / (b.x + b.y * rat);
        return (V)((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    const T rat = b.x / b.y, scl = 1 / (b.y + b.x * rat);
    return (V)((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
""",
    "cexp": """V cexp_T(const V a) {
    if (a.y == 0)                      /* a real argument keeps a real result */
        return (V)(exp(a.x), a.y);
    const T e = exp(a.x);
    return (V)(e * cos(a.y), e * sin(a.y));
}
""",
    "clog": """V clog_T(const V a) {
    return (V)(log(hypot(a.x, a.y)), atan2(a.y, a.x));
}
""",
    "csqrt": """V csqrt_T(const V a) {          /* the C library's csqrt, without cancellation */
    if (a.x == 0 && a.y == 0)
        return (V)(0, a.y);
    if (isinf(a.y))
        return (V)(INFINITY, a.y);
    const T t = sqrt((fabs(a.x) + hypot(a.x, a.y)) / 2);
    if (a.x >= 0)
        return (V)(t, a.y / (2 * t));
    return (V)(fabs(a.y) / (2 * t), copysign(t, a.y));
}
""",
    "csin": """V csin_T(const V a) {
    return (V)(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y));
}
""",
    "ccos": """V ccos_T(const V a) {
    return (V)(cos(a.x) * cosh(a.y), -(sin(a.x) * sinh(a.y)));
}
""",
    "ctanh": """V ctanh_T(const V a) {          /* Kahan's algorithm, as the C library's ctanh */
    if (fabs(a.x) > (sizeof(T) == 4 ? 9 : 22)) {
        const T e = exp(-2 * fabs(a.x));
        return (V)(copysign((T)1, a.x), 4 * sin(a.y) * cos(a.y) * e);
    }
    const T t = tan(a.y), beta = 1 + t * t, s = sinh(a.x), rho = sqrt(1 + s * s);
    const T denom = 1 + beta * s * s;
    return (V)(beta * rho * s / denom, t / denom);
}
""",
    "csigmoid": """V csigmoid_T(const V a) {       /* ATen: 1 / (1 + exp(-a)) */
    return cdiv_T((V)(1, 0), (V)(1, 0) + cexp_T(-a));
}
""",
    "cpow": """V cpow_T(const V a, const V b) {     /* exp(b * log(a)), 0 for a zero base */
    if (b.x == 0 && b.y == 0)
        return (V)(1, 0);
    if (a.x == 0 && a.y == 0)
        return (b.y == 0 && b.x > 0) ? (V)(0, 0) : (V)(NAN, NAN);
    return cexp_T(cmul_T(b, clog_T(a)));
}
""",
    "csgn": """V csgn_T(const V a) {            /* a / |a|, 0 at 0 */
    const T r = hypot(a.x, a.y);
    return r == 0 ? (V)(0, 0) : (V)(a.x / r, a.y / r);
}
""",
}
NEEDS = {"csigmoid": ("cdiv", "cexp"), "cpow": ("cmul", "cexp", "clog")}


def helpers_for(body) -> str:
    """The definitions of the complex helpers ``body`` calls, each before its callers."""
    text = ""
    for ctype in ("float", "double"):
        called = {name for name in HELPERS if f"{name}_{ctype}(" in body}
        called |= {need for name in called for need in NEEDS.get(name, ())}
        for name, source in HELPERS.items():        # in dependency order
            if name in called:
                typed = source.replace("_T(", f"_{ctype}(")
                text += f"#define T {ctype}\n#define V {ctype}2\n{typed}#undef V\n#undef T\n"
    return text


def is_complex(x) -> bool:
    return x.dtype in PART


class ComplexRules:
    """``ops.*`` on complex values (mixed in before the OpenCL handler; a real value takes the
    handler's own rule)."""

    def _call(self, helper, dtype, *args):
        return self._emit(f"{helper}_{PART[dtype]}({', '.join(map(str, args))})", dtype)

    def _both(self, a, b):
        """``a`` and ``b`` as the same complex dtype (one of them may be real)."""
        dtype = a.dtype if is_complex(a) else b.dtype
        return (a if a.dtype == dtype else self.to_dtype(a, dtype),
                b if b.dtype == dtype else self.to_dtype(b, dtype))

    def constant(self, value, dtype):
        if dtype not in PART:
            return super().constant(value, dtype)
        value, part = complex(value), PART_DTYPE[dtype]
        return self._emit(f"({PART[dtype]}2)({_literal(value.real, part)}, "
                          f"{_literal(value.imag, part)})", dtype)

    def index_expr(self, expr, dtype):
        if dtype not in PART:
            return super().index_expr(expr, dtype)
        return self._emit(f"({PART[dtype]}2)(({PART[dtype]})({expr}), 0)", dtype)

    def to_dtype(self, x, dtype):
        if dtype in PART:
            if x.dtype == dtype:
                return x
            if is_complex(x):
                return self._emit(f"convert_{PART[dtype]}2({x})", dtype)
            return self._emit(f"({PART[dtype]}2)(({PART[dtype]})({x}), 0)", dtype)
        if is_complex(x):     # a complex value made real drops its imaginary part, as ATen's copy
            if dtype == "bool":
                return self._emit(f"{x}.x != 0 || {x}.y != 0", "bool")
            return super().to_dtype(self._emit(f"{x}.x", PART_DTYPE[x.dtype]), dtype)
        return super().to_dtype(x, dtype)

    def _binary(self, name, helper, a, b):
        if not (is_complex(a) or is_complex(b)):
            return getattr(super(), name)(a, b)
        a, b = self._both(a, b)
        return self._call(helper, a.dtype, a, b)

    def mul(self, a, b):
        return self._binary("mul", "cmul", a, b)

    def truediv(self, a, b):
        return self._binary("truediv", "cdiv", a, b)

    def pow(self, a, b):
        return self._binary("pow", "cpow", a, b)

    def add(self, a, b):
        if is_complex(a) or is_complex(b):
            a, b = self._both(a, b)
        return super().add(a, b)

    def sub(self, a, b):
        if is_complex(a) or is_complex(b):
            a, b = self._both(a, b)
        return super().sub(a, b)

    def where(self, cond, a, b):
        if is_complex(a) or is_complex(b):     # a real branch would widen to (v, v)
            a, b = self._both(a, b)
        return super().where(cond, a, b)

    def eq(self, a, b):
        if not (is_complex(a) or is_complex(b)):
            return super().__getattr__("eq")(a, b)
        a, b = self._both(a, b)
        return self._emit(f"{a}.x == {b}.x && {a}.y == {b}.y", "bool")

    def ne(self, a, b):
        if not (is_complex(a) or is_complex(b)):
            return super().__getattr__("ne")(a, b)
        a, b = self._both(a, b)
        return self._emit(f"{a}.x != {b}.x || {a}.y != {b}.y", "bool")

    def _unary(self, name, helper, x):
        if not is_complex(x):
            return getattr(super(), name)(x) if hasattr(super(), name) else \
                super().__getattr__(name)(x)
        return self._call(helper, x.dtype, x)

    def exp(self, x):
        return self._unary("exp", "cexp", x)

    def log(self, x):
        return self._unary("log", "clog", x)

    def sqrt(self, x):
        return self._unary("sqrt", "csqrt", x)

    def sin(self, x):
        return self._unary("sin", "csin", x)

    def cos(self, x):
        return self._unary("cos", "ccos", x)

    def tanh(self, x):
        return self._unary("tanh", "ctanh", x)

    def sigmoid(self, x):
        return self._unary("sigmoid", "csigmoid", x)

    def reciprocal(self, x):
        if not is_complex(x):
            return super().reciprocal(x)
        return self._call("cdiv", x.dtype, f"({PART[x.dtype]}2)(1, 0)", x)

    def abs(self, x):
        if not is_complex(x):
            return super().abs(x)
        return self._emit(f"hypot({x}.x, {x}.y)", PART_DTYPE[x.dtype])

    def angle(self, x):
        """The phase of a complex value; of a real one, pi for negatives, NaN kept (ATen)."""
        if is_complex(x):
            return self._emit(f"atan2({x}.y, {x}.x)", PART_DTYPE[x.dtype])
        t = self.types[x.dtype]
        return self._emit(f"{x} != {x} ? {x} : {x} < 0 ? ({t})M_PI : ({t})0", x.dtype)

    def conj(self, x):
        return self._emit(f"({PART[x.dtype]}2)({x}.x, -{x}.y)", x.dtype) if is_complex(x) else x

    def sgn(self, x):
        return self._call("csgn", x.dtype, x) if is_complex(x) else self.sign(x)

    def real_part(self, x):
        return self._emit(f"{x}.x", PART_DTYPE[x.dtype])

    def make_complex(self, re, im):
        dtype = COMPLEX_FOR[re.dtype]
        return self._emit(f"({PART[dtype]}2)({re}, {im})", dtype)

    def isnan(self, x):
        if not is_complex(x):
            return super().isnan(x)
        return self._emit(f"{x}.x != {x}.x || {x}.y != {x}.y", "bool")

    def isinf(self, x):
        if not is_complex(x):
            return super().isinf(x)
        return self._emit(f"isinf({x}.x) || isinf({x}.y)", "bool")

    def isfinite(self, x):
        if not is_complex(x):
            return super().isfinite(x)
        return self._emit(f"isfinite({x}.x) && isfinite({x}.y)", "bool")


def reduction_rules(reduction_type, ctype):
    """(initial value, combination of ``{a}`` and ``{b}``) of a complex reduction. PyTorch has
    no complex max or min (their meta functions refuse them); the one-element gathers of the
    window kernels (``roll``, ``flip``, ...) reduce with ``max``, which here is NumPy's
    lexicographic order, NaN in either part propagating, so a gather returns its element with
    its zeros' signs (a sum from 0 would turn -0.0 into +0.0)."""
    if reduction_type == "sum":
        return f"({ctype})(0, 0)", "{a} + {b}"
    if reduction_type == "prod":
        return f"({ctype})(1, 0)", f"cmul_{ctype[:-1]}({{a}}, {{b}})"
    if reduction_type in ("max", "min"):
        order, bound = (">", "-INFINITY") if reduction_type == "max" else ("<", "INFINITY")
        wins = (f"{{a}}.x != {{a}}.x || {{a}}.y != {{a}}.y || {{a}}.x {order} {{b}}.x || "
                f"({{a}}.x == {{b}}.x && {{a}}.y {order} {{b}}.y)")
        return f"({ctype})({bound}, {bound})", f"({wins}) ? {{a}} : {{b}}"
    raise NotImplementedError(f"no complex {reduction_type} reduction on the 'OpenCL' backend")
