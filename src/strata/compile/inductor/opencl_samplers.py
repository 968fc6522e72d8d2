"""The OpenCL device's samplers of ``ops/distributions.py`` (so ``distributions.Gamma``,
``Dirichlet``, ``Beta``, ``Poisson`` and ``Binomial`` sample on the device): ATen's algorithms
(``ATen/native/Distributions.h``, ``Distributions.cpp``) on Philox draws.

- ``_standard_gamma``: Marsaglia and Tsang's rejection (``sample_gamma``; alpha < 1 boosted by
  ``u^(1/alpha)``), clamped to the dtype's smallest normal number as ATen clamps it;
  ``_sample_dirichlet`` normalizes those gammas over the last dim.
- ``poisson``: Hormann's transformed rejection (PTRS) for rates of 10 or more, else the product
  of uniforms (``sample_poisson``).
- ``binomial``: BTRS for ``count * min(p, 1 - p) >= 10``, else the geometric-sum inversion
  (``sample_binomial``).

A rejection loop takes as many numbers as it needs, so each element reads a stream of its own:
draw call k of element i is Philox of (i, the launch's offset + k * 2^40) under the launch's key
(oclprinter's Note [Philox]): a seed gives the same samples on every run and work-group size
(not the CPU's, which are NumPy's). The samplers compute in the compute type (``float`` for
float32 and the half types, ``double`` for float64). Inputs whose loop would never end (a
negative or NaN Poisson rate, an infinite binomial count) are refused on the host first (a sync
point, as the CPU checks them).
"""

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import distributions as DS
from ...ops import pointwise as P
from ...ops import reductions as RED
from .oclprinter import BUFFER_TYPES, FP64, PHILOX, load_expr, store_statement, with_helpers
from .opencl_pointwise import kernel_name, launch, runtime_of

# The stream of one element: 32-bit words of successive Philox calls.
STREAM = """typedef struct { long key, offset, i; uint4 words; int left, calls; } draws;
uint next_word(draws *d) {
    if (d->left == 0) {
        d->words = philox(d->key, d->offset + ((long)d->calls << 40), d->i);
        d->calls += 1;
        d->left = 4;
    }
    d->left -= 1;
    return d->left == 3 ? d->words.x : d->left == 2 ? d->words.y :
           d->left == 1 ? d->words.z : d->words.w;
}
"""
UNIFORM = {
    "float": """float uniform_float(draws *d) {            /* [0, 1) */
    return (next_word(d) >> 8) * 0x1.0p-24f;
}
""",
    "double": """double uniform_double(draws *d) {
    const ulong high = next_word(d);
    return (double)((high << 21) ^ (next_word(d) >> 11)) * 0x1.0p-53;
}
""",
}
SAMPLERS = """T normal_T(draws *d) {                         /* Box-Muller */
    const T u = 1 - uniform_T(d), v = uniform_T(d);
    return sqrt(-2 * log(u)) * cospi(2 * v);
}
T gamma_T(T alpha, draws *d) {
    if (!(alpha > 0))                              /* 0, negative, NaN: the smallest normal */
        return 0;
    if (isinf(alpha))
        return alpha;
    T scale = 1;
    if (alpha < 1) {
        scale = pow(1 - uniform_T(d), 1 / alpha);
        alpha += 1;
    }
    const T dd = alpha - (T)1 / 3, c = 1 / sqrt(9 * dd);
    for (;;) {
        T x, y;
        do {
            x = normal_T(d);
            y = 1 + c * x;
        } while (y <= 0);
        const T v = y * y * y, u = 1 - uniform_T(d), xx = x * x;
        if (u < 1 - (T)0.0331 * xx * xx)
            return scale * dd * v;
        if (log(u) < (T)0.5 * xx + dd * (1 - v + log(v)))
            return scale * dd * v;
    }
}
T poisson_T(const T lambda, draws *d) {
    if (lambda > (T)9.2e18)                        /* ATen's int64 count overflows */
        return (T)-9223372036854775808.0;
    if (lambda >= 10) {
        const T slam = sqrt(lambda), loglam = log(lambda);
        const T b = (T)0.931 + (T)2.53 * slam, a = (T)-0.059 + (T)0.02483 * b;
        const T invalpha = (T)1.1239 + (T)1.1328 / (b - (T)3.4);
        const T vr = (T)0.9277 - (T)3.6224 / (b - 2);
        for (;;) {
            const T u = uniform_T(d) - (T)0.5, v = uniform_T(d), us = (T)0.5 - fabs(u);
            const T k = floor((2 * a / us + b) * u + lambda + (T)0.43);
            if (us >= (T)0.07 && v <= vr)
                return k;
            if (k < 0 || (us < (T)0.013 && v > us))
                continue;
            if (log(v) + log(invalpha) - log(a / (us * us) + b) <=
                    -lambda + k * loglam - lgamma(k + 1))
                return k;
        }
    }
    if (lambda == 0)
        return 0;
    const T enlam = exp(-lambda);
    T count = 0, product = 1;
    for (;;) {
        product *= uniform_T(d);
        if (product <= enlam)
            return count;
        count += 1;
    }
}
T stirling_tail_T(const T k) {
    const T tail[10] = {0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                        0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                        0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                        0.00833056343336287};
    if (k <= 9)
        return tail[(int)k];
    const T kp1sq = (k + 1) * (k + 1);
    return ((T)1 / 12 - ((T)1 / 360 - (T)1 / 1260 / kp1sq) / kp1sq) / (k + 1);
}
T btrs_T(const T count, const T prob, draws *d) {
    const T stddev = sqrt(count * prob * (1 - prob));
    const T b = (T)1.15 + (T)2.53 * stddev, a = (T)-0.0873 + (T)0.0248 * b + (T)0.01 * prob;
    const T c = count * prob + (T)0.5, v_r = (T)0.92 - (T)4.2 / b, r = prob / (1 - prob);
    const T alpha = ((T)2.83 + (T)5.1 / b) * stddev, m = floor((count + 1) * prob);
    for (;;) {
        const T u = uniform_T(d) - (T)0.5;
        T v = uniform_T(d);
        const T us = (T)0.5 - fabs(u), k = floor((2 * a / us + b) * u + c);
        if (k < 0 || k > count)
            continue;
        if (us >= (T)0.07 && v <= v_r)
            return k;
        v = log(v * alpha / (a / (us * us) + b));
        const T upper = (m + (T)0.5) * log((m + 1) / (r * (count - m + 1))) +
            (count + 1) * log((count - m + 1) / (count - k + 1)) +
            (k + (T)0.5) * log(r * (count - k + 1) / (k + 1)) +
            stirling_tail_T(m) + stirling_tail_T(count - m) - stirling_tail_T(k) -
            stirling_tail_T(count - k);
        if (v <= upper)
            return k;
    }
}
T binomial_inversion_T(const T count, const T prob, draws *d) {
    const T logprob = log1p(-prob);
    T geom_sum = 0, successes = 0;
    for (;;) {
        geom_sum += ceil(log(uniform_T(d)) / logprob);
        if (geom_sum > count)
            return successes;
        successes += 1;
    }
}
T binomial_T(const T count, const T prob, draws *d) {
    if (count <= 0 || prob <= 0)
        return 0;
    if (prob >= 1)
        return count;
    if (prob <= (T)0.5)
        return count * prob >= 10 ? btrs_T(count, prob, d) : binomial_inversion_T(count, prob, d);
    if (prob > (T)0.5) {
        const T q = 1 - prob;
        return count - (count * q >= 10 ? btrs_T(count, q, d) : binomial_inversion_T(count, q, d));
    }
    return (T)NAN;                                 /* a NaN probability */
}
"""


def _compute(dtype):
    return "double" if dtype is D.float64 else "float"


def sample(op_name, function, operands, out, generator=None, minimum=None):
    """``out[i] = function(operands[i]..., stream of element i)``: one work-item per element of
    the contiguous ``out``; ``operands`` are contiguous tensors of its shape. ``minimum``
    clamps the result from below (the gamma's smallest normal)."""
    rt = runtime_of(out)
    key, offset = rt.philox(generator)
    tensors = [*operands, out]
    dtypes = tuple(t.dtype.name for t in tensors)
    compute = _compute(out.dtype)
    values = [v for t in tensors for v in rt.buffer_of(t)] + [key, offset]
    names = [f"{p}{k}" for k in range(len(tensors)) for p in ("t", "t_off_")] + ["key", "offset"]
    if out.numel():
        launch(op_name, (op_name, function, dtypes, minimum),
               lambda: _kernel(op_name, function, dtypes, compute, minimum, names), values,
               tensors, out.numel(), rt, names=lambda: names)
    return out


def _kernel(op_name, function, dtypes, compute, minimum, names):
    last = len(dtypes) - 1
    params = [f"__global {'' if k == last else 'const '}{BUFFER_TYPES[dt]}* restrict t{k}, "
              f"const long t_off_{k}" for k, dt in enumerate(dtypes)]
    loads = [f"({compute}){load_expr(dt, f'(t{k} + t_off_{k})', 'i')}"
             for k, dt in enumerate(dtypes[:-1])]
    value = f"{function}_{compute}({', '.join(loads)}, &d)"
    if minimum is not None:
        value = f"fmax({value}, ({compute}){minimum!r})"
    typed = (UNIFORM[compute] + SAMPLERS).replace("_T(", f"_{compute}(")
    source = f"""{FP64 if compute == "double" else ""}{PHILOX}{STREAM}#define T {compute}
{typed}#undef T
__kernel void {kernel_name(op_name)}({", ".join(params)}, const long key, const long offset) {{
    const long i = get_global_id(0);
    draws d = {{key, offset, i, (uint4)(0), 0, 0}};
    {store_statement(dtypes[last], f"(t{last} + t_off_{last})", "i", value)}
}}
"""
    return with_helpers(source), names


def _fresh(spec, like):
    shape = tuple(spec.shape)
    return runtime_of(like).empty(shape, contiguous_strides(shape), spec.dtype)


def _standard_gamma(self, generator=None):
    spec = DS._standard_gamma.meta(self, generator)
    return sample("aten::_standard_gamma", "gamma", [self.contiguous()], _fresh(spec, self),
                  generator, D.finfo(spec.dtype).tiny)


def _sample_dirichlet(self, generator=None):
    """Gamma draws normalized over the last dim (a 0-dim tensor is one category)."""
    spec = DS._sample_dirichlet.meta(self, generator)
    gammas = sample("aten::_sample_dirichlet", "gamma", [self.contiguous()], _fresh(spec, self),
                    generator, D.finfo(spec.dtype).tiny)
    if not gammas.ndim:
        return P.div(gammas, gammas)
    return P.div(gammas, RED.sum(gammas, [-1], True))


def _poisson(self, generator=None):
    spec = DS.poisson.meta(self, generator)
    if not RED.all(P.ge(self, 0)).item():     # NaN fails too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return sample("aten::poisson", "poisson", [self.contiguous()], _fresh(spec, self), generator)


def _binomial(count, prob, generator=None):
    spec = DS.binomial.meta(count, prob, generator)
    if not RED.all(P.lt(count, 2.0 ** 63)).item():   # inf, NaN, huge: ATen's loop never ends
        raise RuntimeError("binomial: count must be finite and below 2**63")
    shape = tuple(spec.shape)
    operands = [t.expand(shape).contiguous() for t in (count, prob)]
    return sample("aten::binomial", "binomial", operands, _fresh(spec, count), generator)


KERNELS = {DS._standard_gamma: _standard_gamma, DS._sample_dirichlet: _sample_dirichlet,
           DS.poisson: _poisson, DS.binomial: _binomial}
