"""The OpenCL device's random ops: loop-IR pointwise kernels over Philox (oclprinter's
Note [Philox]): the factories, ``normal_``, ``uniform_``, ``bernoulli`` and the in-place fills of
``ops/random_fills.py`` (PyTorch's transformations of uniform or normal draws); and
``randperm``, a bitonic sort of Philox keys in two hand-written kernels (the samplers of
``ops/distributions.py`` are in opencl_samplers.py).

Element i of a launch is a function of (key, offset, i) only: the runtime hands out the key
(the seed) and a per-launch offset (``OpenCLRuntime.philox``), so a seeded program draws the same
numbers on every run, whatever the work-group size. The numbers differ from the CPU device's
(NumPy's PCG64), as PyTorch's CUDA numbers differ from its CPU ones.
"""

import math

from ...backends.opencl import runtime as R
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import factory as F
from ...ops import pointwise as P
from ...ops import random_fills as RF
from ...ops import reductions as RED
from .ir import InputBuffer, Kernel, Pointwise, ops
from .oclprinter import PHILOX, print_kernel
from .opencl_nn import window
from .opencl_pointwise import (
    alloc,
    broadcast_strides,
    is_device,
    kernel_name,
    launch,
    runtime_of,
    scalar_argument,
    scalar_value,
    tensor_names,
    tensor_values,
)
from .opencl_sort import topk

_SCALARS = ("key", "offset")


def _linear(index, ranges):
    """The row-major position of ``index`` (C expression): element i of the tensor draws
    counter i whatever its strides."""
    terms = []
    for d, i in enumerate(index):
        inner = " * ".join(ranges[d + 1:])
        terms.append(f"{i} * {inner}" if inner else str(i))
    return " + ".join(terms) or "0"


def draw(op_name, out, formula, generator=None, operands=(), compute=None):
    """``out[i] = formula(random, compute, *operands at i)``: a pointwise kernel with the
    Philox key and offset as scalar arguments; ``random(kind)`` draws element i's number as
    ``compute`` (a dtype name, default out's); ``operands`` are (tensor or number, dtype) pairs
    broadcast to ``out``."""
    compute = compute or out.dtype.name
    rt = runtime_of(out)
    key, offset = rt.philox(generator)
    rank = out.ndim
    values = [key, offset]                      # in the order of ``names`` below
    kinds = []
    for v, dt in operands:
        if is_device(v):
            values += tensor_values(rt, v, broadcast_strides(v, rank, False))
            kinds.append(("t", v.dtype.name, dt.name))
        else:
            values.append(scalar_argument(scalar_value(v, out.device), dt))
            kinds.append(("s", dt.name))
    values += tensor_values(rt, out)
    values += out._shape
    key_ = (op_name, formula, rank, tuple(kinds), out.dtype.name, compute)

    def names():
        listed = list(_SCALARS)
        for n, kind in enumerate(kinds):
            listed += tensor_names(f"in{n}", rank) if kind[0] == "t" else [f"in{n}"]
        return listed + tensor_names("out0", rank) + [f"s{d}" for d in range(rank)]

    def build():
        ranges = tuple(f"s{d}" for d in range(rank))
        inputs = [InputBuffer(n, "int64", (), ()) for n in _SCALARS]
        scalars = set(_SCALARS)
        loads = []
        for n, kind in enumerate(kinds):
            name = f"in{n}"
            if kind[0] == "t":
                b = InputBuffer(name, kind[1], (None,) * rank,
                                tuple(f"{name}_st{d}" for d in range(rank)), f"{name}_off")
                loads.append((b, kind[2]))
            else:
                b = InputBuffer(name, kind[1], (), ())
                scalars.add(name)
                loads.append((b, kind[1]))
            inputs.append(b)

        def inner(index):
            counter = ops.index_expr(_linear(index, ranges), "int64")

            def random(kind):
                return ops.philox(ops.load("key", "0"), ops.load("offset", "0"), counter, kind,
                                  compute)
            args = []
            for b, cdt in loads:
                v = ops.load(b.name, b.index(index) if b.stride else "0")
                args.append(v if b.dtype == cdt else ops.to_dtype(v, cdt))
            result = formula(random, compute, *args)
            name = out.dtype.name
            return result if result.dtype == name else ops.to_dtype(result, name)
        layout = InputBuffer("out0", out.dtype.name, (None,) * rank,
                             tuple(f"out0_st{d}" for d in range(rank)), "out0_off")
        node = Pointwise("out0", out.dtype.name, ranges, inner)
        return print_kernel(Kernel(kernel_name(op_name), inputs, [node]), ranges,
                            {"out0": layout}, frozenset(scalars))
    tensors = [v for v, _ in operands if is_device(v)] + [out]
    launch(op_name, key_, build, values, tensors, out.numel(), rt, names=names)
    return out


# --- formulas (module-level functions: the program cache keys on them) ------------------------

def uniform_formula(random, compute, low, high):
    return _below(ops.add(low, ops.mul(random("uniform"), ops.sub(high, low))), compute, low,
                  high)


def _below(value, compute, low, high):
    """``value`` rounded to ``compute``, ``low`` where it rounded up to ``high``: [low, high),
    as PyTorch's CUDA uniform reverses the bound (float16's 0.9999 rounds to 1)."""
    rounded = ops.to_dtype(value, compute)
    return ops.where(ops.eq(rounded, high), low, rounded)


def normal_formula(random, compute, mean, std):
    return ops.add(mean, ops.mul(random("normal"), std))


def standard_uniform(random, compute):
    return _below(random("uniform"), compute, ops.constant(0, compute), ops.constant(1, compute))


def standard_normal(random, compute):
    return random("normal")


def bernoulli_formula(random, compute, p):
    return ops.lt(random("uniform"), p)


def randint_formula(random, compute, low, span):
    """low + (63 random bits mod span): a modulo bias below 2**-31 for spans under 2**32, as
    in PyTorch's CUDA ``random_from_to``."""
    return ops.add(low, ops.mod(random("bits"), span))


def _factory(op, formula):
    """rand/randn: an allocation, then a draw in the output's dtype."""
    empty = alloc(op)

    def kernel(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
        spec = op.meta(size, generator, dtype)
        out = empty(size, generator, spec.dtype, layout, device, pin_memory)
        return draw(op.qualname, out, formula, generator)
    return kernel


def normal_(self, mean=0.0, std=1.0, generator=None):
    F.normal_.meta(self, mean, std)
    return draw("aten::normal_", self, normal_formula, generator,
                [(mean, self.dtype), (std, self.dtype)])


def uniform_(self, lo=0.0, hi=1.0, generator=None):
    F.uniform_.meta(self, lo, hi)
    return draw("aten::uniform_", self, uniform_formula, generator,
                [(lo, self.dtype), (hi, self.dtype)])


def bernoulli_p(self, p=0.5, generator=None):
    spec = F.bernoulli.meta(self, p)
    out = runtime_of(self).empty(tuple(spec.shape), tuple(spec.strides), spec.dtype)
    return draw("aten::bernoulli.p", out, bernoulli_formula, generator, [(p, D.float32)],
                "float32")


def bernoulli_tensor(self, generator=None):
    """1 where a uniform draw is below ``self``'s probability; the probabilities are checked
    on the host first (a sync point, as the CPU checks)."""
    spec = F.bernoulli_tensor.meta(self)
    inside = RED.all(P.logical_and(P.ge(self, 0), P.le(self, 1)))
    if not inside.item():                     # NaN fails too
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    out = runtime_of(self).empty(tuple(spec.shape), tuple(spec.strides), spec.dtype)
    return draw("aten::bernoulli", out, bernoulli_formula, generator, [(self, self.dtype)],
                self.dtype.name)


def randint(low, high, size, generator=None, dtype=None, layout=None, device=None,
            pin_memory=None):
    spec = F.randint.meta(low, high, size, generator, dtype)
    shape = tuple(spec.shape)
    out = R.get(R.device_index(device)).empty(shape, contiguous_strides(shape), spec.dtype)
    return draw("aten::randint.low", out, randint_formula, generator,
                [(low, D.int64), (high - low, D.int64)], "int64")


def multinomial(self, num_samples, replacement=False, generator=None):
    """ATen's sampling: without replacement (or one sample) the top ``num_samples`` of
    p / q with q ~ Exp(1) (the Gumbel trick; zero probabilities come last, in index order);
    with replacement, each sample the first category whose cumulative probability passes
    u * total. The distribution is checked on the host first (a sync point, as the CPU
    checks)."""
    spec = F.multinomial.meta(self, num_samples, replacement)
    probs = self if self.ndim == 2 else self.unsqueeze(0)
    bad = RED.any(P.logical_or(P.logical_not(P.isfinite(probs)), P.lt(probs, 0)))
    if bad.item():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if RED.any(P.le(RED.sum(probs, [1]), 0)).item():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rt = runtime_of(self)
    rows, n = probs._shape
    if replacement and num_samples > 1:
        draws = rt.empty((rows, num_samples), (num_samples, 1), probs.dtype)
        draw("aten::multinomial", draws, standard_uniform, generator)
        cdf = RED.cumsum(probs, 1)
        out = rt.empty((rows, num_samples), (num_samples, 1), D.int64)
        window("aten::multinomial", {"cdf": cdf, "u": draws}, {"last": n - 1},
               [(out, _first_past)], (n,), "sum", _below_draw, "int64")
    else:
        keys = rt.empty((rows, n), (n, 1), probs.dtype)
        draw("aten::multinomial", keys, gumbel_key, generator, [(probs, probs.dtype)])
        out = topk(keys, num_samples, 1)[1]
    return out.reshape(tuple(spec.shape))


def gumbel_key(random, compute, p):
    """p / q, q = -log(1 - u) ~ Exp(1)."""
    one = ops.constant(1, compute)
    return ops.truediv(p, ops.neg(ops.log(ops.sub(one, random("uniform")))))


def _below_draw(B, index, rindex):
    """1 where the cumulative probability up to j is at most u * total."""
    r, s = index
    (j,) = rindex
    target = ops.mul(B["u"].load((r, s)), B["cdf"].load((r, "last")))
    return ops.to_dtype(ops.le(B["cdf"].load((r, j)), target), "int64")


def _first_past(B, index):
    return ops.minimum(ops.load("red", "0"), ops.index_expr("last", "int64"))


def randperm(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """0..n-1 in the order of a Philox key each (63 random bits; a tie, one in 2^63, keeps
    index order), so a seed gives the same permutation on every run: the keys, padded to a
    power of two P with the largest key, sorted with their positions by a bitonic network of
    log2(P) (log2(P) + 1) / 2 compare-and-swap launches (n log^2 n work)."""
    spec = F.randperm.meta(n, generator, dtype)
    rt = R.get(R.device_index(device))
    if not n:
        return rt.empty((0,), (1,), spec.dtype)
    padded = 1 << (n - 1).bit_length()
    keys, order = (rt.empty((padded,), (1,), D.int64) for _ in range(2))
    tensors = [keys, order]
    buffers = [v for t in tensors for v in rt.buffer_of(t)]
    key, offset = rt.philox(generator)
    launch("aten::randperm", ("aten::randperm", "keys"), _randperm_keys,
           buffers + [n, key, offset], tensors, padded, rt, names=lambda: _RANDPERM_KEYS)
    size = 2
    while size <= padded:
        stride = size // 2
        while stride:
            launch("aten::randperm", ("aten::randperm", "step"), _bitonic_step,
                   buffers + [size, stride], tensors, padded, rt, names=lambda: _BITONIC_STEP)
            stride //= 2
        size *= 2
    if spec.dtype is D.int64:
        return order if padded == n else order[:n].clone()
    return F._to_copy(order[:n], dtype=spec.dtype)


_RANDPERM_KEYS = ["keys", "keys_off", "order", "order_off", "n", "key", "offset"]
_BITONIC_STEP = ["keys", "keys_off", "order", "order_off", "size", "stride"]
_KEY_PARAMS = ("__global long* restrict keys, const long keys_off, "
               "__global long* restrict order, const long order_off")


def _randperm_keys():
    """Element i: key i (past n the largest long, so the padding sorts last) and position i."""
    source = f"""{PHILOX}
__kernel void {kernel_name("aten::randperm")}({_KEY_PARAMS}, const long n, const long key,
                                        const long offset) {{
    const long i = get_global_id(0);
    keys[keys_off + i] = i < n ? (long)(philox_bits(philox(key, offset, i)) >> 1) : LONG_MAX;
    order[order_off + i] = i;
}}
"""
    return source, _RANDPERM_KEYS


def _bitonic_step():
    """One compare-and-swap stage: i and i ^ stride ordered ascending where bit ``size`` of i
    is clear, descending where it is set, by (key, position)."""
    source = f"""__kernel void {kernel_name("aten::randperm")}({_KEY_PARAMS}, const long size,
                                        const long stride) {{
    const long i = get_global_id(0), l = i ^ stride;
    if (l <= i)
        return;
    keys += keys_off;
    order += order_off;
    const long ki = keys[i], kl = keys[l], oi = order[i], ol = order[l];
    const int after = ki > kl || (ki == kl && oi > ol);
    if (((i & size) == 0) == after) {{
        keys[i] = kl;
        keys[l] = ki;
        order[i] = ol;
        order[l] = oi;
    }}
}}
"""
    return source, _BITONIC_STEP


# --- the in-place fills of ops/random_fills.py ---------------------------------------------------

def _compute(out):
    """The floating type a fill computes in: double for double, float for the rest."""
    return D.float64 if out.dtype is D.float64 else D.float32


def exponential_formula(random, compute, lambd):
    """-log(1 - u) / lambda."""
    one = ops.constant(1, compute)
    return ops.truediv(ops.neg(ops.log(ops.sub(one, random("uniform")))), lambd)


def geometric_formula(random, compute, log_q):
    """ceil(log(u) / log(1 - p)), with log(1 - p) computed on the host."""
    return ops.ceil(ops.truediv(ops.log(random("uniform")), log_q))


def cauchy_formula(random, compute, median, sigma):
    """median + sigma * tan(pi (u - 1/2))."""
    turn = ops.mul(ops.constant(math.pi, compute), ops.sub(random("uniform"),
                                                           ops.constant(0.5, compute)))
    return ops.add(median, ops.mul(sigma, ops.tan(turn)))


def log_normal_formula(random, compute, mean, std):
    return ops.exp(ops.add(mean, ops.mul(random("normal"), std)))


def whole_range_formula(random, compute, low):
    """low + 63 random bits: [low, low + 2**63), a span one past the largest long."""
    return ops.add(low, random("bits"))


def exponential_(self, lambd=1.0, generator=None):
    RF.exponential_.meta(self, lambd)
    compute = _compute(self)
    return draw("aten::exponential_", self, exponential_formula, generator,
                [(lambd, compute)], compute.name) if self.numel() else self


def geometric_(self, p, generator=None):
    RF.geometric_.meta(self, p)
    compute = _compute(self)
    return draw("aten::geometric_", self, geometric_formula, generator,
                [(math.log(1.0 - p), compute)], compute.name) if self.numel() else self


def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    RF.cauchy_.meta(self, median, sigma)
    compute = _compute(self)
    return draw("aten::cauchy_", self, cauchy_formula, generator,
                [(median, compute), (sigma, compute)], compute.name) if self.numel() else self


def log_normal_(self, mean=1.0, std=2.0, generator=None):
    RF.log_normal_.meta(self, mean, std)
    compute = _compute(self)
    return draw("aten::log_normal_", self, log_normal_formula, generator,
                [(mean, compute), (std, compute)], compute.name) if self.numel() else self


def bernoulli_float(self, p=0.5, generator=None):
    RF.bernoulli_float.meta(self, p)
    return draw("aten::bernoulli_.float", self, bernoulli_formula, generator, [(p, D.float32)],
                "float32") if self.numel() else self


def bernoulli_tensor_(self, p, generator=None):
    """As ``bernoulli_tensor``: the probabilities are checked on the host first."""
    RF.bernoulli_tensor_.meta(self, p)
    if not self.numel():
        return self
    _check_probabilities(p)
    compute = _compute(p)
    return draw("aten::bernoulli_.Tensor", self, bernoulli_formula, generator, [(p, compute)],
                compute.name)


def _check_probabilities(p):
    inside = RED.all(P.logical_and(P.ge(p, 0), P.le(p, 1)))
    if not inside.item():                     # NaN fails too
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")


def _random_integers(self, bounds, generator):
    """Integers in the inclusive ``bounds`` as ``randint``'s (None: the whole int64 range,
    which 63-bit draws cannot cover: refused)."""
    if not self.numel():
        return self
    if bounds is None:
        raise NotImplementedError("aten::random_.from over the whole int64 range (from=-2**63, "
                                  "to=None) is not implemented on the 'OpenCL' backend")
    low, high = bounds
    span = high - low + 1
    if span > 2 ** 63 - 1:                    # [low, low + 2**63): every 63-bit draw
        return draw("aten::random_", self, whole_range_formula, generator,
                    [(low, D.int64)], "int64")
    return draw("aten::random_", self, randint_formula, generator,
                [(low, D.int64), (span, D.int64)], "int64")


def kernels() -> dict:
    return {F.randperm: randperm, F.rand: _factory(F.rand, standard_uniform),
            F.randn: _factory(F.randn, standard_normal),
            F.normal_: normal_, F.uniform_: uniform_, F.bernoulli: bernoulli_p,
            F.randint: randint, F.multinomial: multinomial,
            F.bernoulli_tensor: bernoulli_tensor,
            RF.exponential_: exponential_, RF.geometric_: geometric_, RF.cauchy_: cauchy_,
            RF.log_normal_: log_normal_, RF.bernoulli_float: bernoulli_float,
            RF.bernoulli_tensor_: bernoulli_tensor_, **RF.random_kernels(_random_integers)}
