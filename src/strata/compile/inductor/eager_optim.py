"""The eager CPU kernels of Adam's (and AdamW's) and SGD-with-momentum's updates (issue 9 §5):
one in-place pass each.

optim/adam.py's update is a dozen strata ops (lerp, mul, addcmul, sqrt, div, add, addcdiv), each
a NumPy pass with a temporary over a parameter or a flat bucket of them. ``adam_step`` does the
same arithmetic per element in one loop, in the same order and each operation rounded to the
dtype as the ops round it, so its results are the op path's bit for bit (tested): built, as
every generated kernel, without FMA contraction (Note [No contraction] in
backends/cpu/native.py; -march=native would otherwise fuse ``m + (g - m) * w`` into one
rounding). ``params``
holds the scalars in the tensor's dtype, as the ops convert a Python number: 1 - beta1 (the
lerp weight, below 0.5), beta2, 1 - beta2, sqrt(1 - beta2^t), eps and -lr / (1 - beta1^t).
``adam_multi_step`` runs every parameter of a group in one call, AdamW's ``param.mul_(1 - lr *
weight_decay)`` first when ``decoupled``, so one parallel loop covers the whole update (Note
[One update kernel] in optim/_group_update.py), as ``sgd_momentum_multi_step`` SGD's.
``sgd_momentum_step`` is SGD's
``buf = buf * momentum + g * (1 - dampening)`` then
``param += -lr * (buf, or g + momentum * buf with nesterov)``, for steps after the first (which
makes the buffer). The C is printed once per dtype and built and cached by the CPU backend's
one build path (backends/cpu/native.py); each call covers ``[lo, hi)``, so the caller's threads
split it.
"""

import ctypes

from ...backends.cpu import native
from .ir import C_TYPES

LIBRARY = "eager_optim"
DTYPES = ("float32", "float64")
SQRT = {"float32": "sqrtf", "float64": "sqrt"}

_KERNEL = """
static inline void adam_range_{dtype}({ctype}* restrict param, const {ctype}* restrict grad,
                                      {ctype}* restrict exp_avg, {ctype}* restrict exp_avg_sq,
                                      const {ctype}* restrict params, int64_t decoupled,
                                      int64_t lo, int64_t hi) {{
    const {ctype} weight = params[0], beta2 = params[1], one_minus_beta2 = params[2];
    const {ctype} bias_correction2_sqrt = params[3], eps = params[4], step = params[5];
    const {ctype} decay = decoupled ? params[6] : 1;
    #pragma omp simd
    for (int64_t i = lo; i < hi; i++) {{
        const {ctype} g = grad[i];
        const {ctype} p = decoupled ? param[i] * decay : param[i];   /* AdamW's mul_ */
        const {ctype} m = exp_avg[i] + (g - exp_avg[i]) * weight;          /* lerp_ */
        const {ctype} v = exp_avg_sq[i] * beta2 + (g * one_minus_beta2) * g;  /* mul_, addcmul_ */
        const {ctype} denom = {sqrt}(v) / bias_correction2_sqrt + eps;
        param[i] = p + (m * step) / denom;                                  /* addcdiv_ */
        exp_avg[i] = m;
        exp_avg_sq[i] = v;
    }}
}}

void adam_step_{dtype}({ctype}* restrict param, const {ctype}* restrict grad,
                       {ctype}* restrict exp_avg, {ctype}* restrict exp_avg_sq,
                       const {ctype}* restrict params, int64_t n, int64_t lo, int64_t hi) {{
    adam_range_{dtype}(param, grad, exp_avg, exp_avg_sq, params, 0, lo, hi);
}}

"""


_SGD = """
static inline void sgd_momentum_range_{dtype}({ctype}* restrict param,
                                              const {ctype}* restrict grad,
                                              {ctype}* restrict buf,
                                              const {ctype}* restrict params, int64_t nesterov,
                                              int64_t lo, int64_t hi) {{
    const {ctype} momentum = params[0], one_minus_dampening = params[1], step = params[2];
    #pragma omp simd
    for (int64_t i = lo; i < hi; i++) {{
        const {ctype} g = grad[i];
        const {ctype} b = buf[i] * momentum + g * one_minus_dampening;   /* mul_, add_ */
        const {ctype} direction = nesterov ? g + b * momentum : b;
        param[i] = param[i] + direction * step;                          /* add_(alpha=-lr) */
        buf[i] = b;
    }}
}}

void sgd_momentum_step_{dtype}({ctype}* restrict param, const {ctype}* restrict grad,
                               {ctype}* restrict buf, const {ctype}* restrict params,
                               int64_t nesterov, int64_t n, int64_t lo, int64_t hi) {{
    sgd_momentum_range_{dtype}(param, grad, buf, params, nesterov, lo, hi);
}}
"""

# Note [One update kernel] (optim/_group_update.py): every parameter of a group, elements
# [lo, hi) of all of them back to back (parameter j holds [offsets[j], offsets[j + 1])), each
# part through the update's range function.
_MULTI = """
void {update}_multi_step_{dtype}({columns}, const int64_t* offsets, int64_t count,
                                 const {ctype}* restrict params, int64_t flag,
                                 int64_t lo, int64_t hi) {{
    int64_t j = 0;
    while (offsets[j + 1] <= lo) j++;
    for (; j < count && offsets[j] < hi; j++) {{
        const int64_t start = lo > offsets[j] ? lo - offsets[j] : 0;
        const int64_t end = (hi < offsets[j + 1] ? hi : offsets[j + 1]) - offsets[j];
        {update}_range_{dtype}({parts}, params, flag, start, end);
    }}
}}
"""
MULTI_COLUMNS = {"adam": ("param", "grad", "exp_avg", "exp_avg_sq"),
                 "sgd_momentum": ("param", "grad", "buf")}


def _multi(update, dtype):
    names = MULTI_COLUMNS[update]
    return _MULTI.format(update=update, dtype=dtype, ctype=C_TYPES[dtype],
                         columns=", ".join(f"{C_TYPES[dtype]}* const* {n}" for n in names),
                         parts=", ".join(f"{n}[j]" for n in names))


def source() -> str:
    body = "".join(_KERNEL.format(dtype=d, ctype=C_TYPES[d], sqrt=SQRT[d]) +
                   _SGD.format(dtype=d, ctype=C_TYPES[d]) +
                   "".join(_multi(update, d) for update in MULTI_COLUMNS) for d in DTYPES)
    return "#include <math.h>\n#include <stdint.h>\n" + body


_SIGNATURES = {}
for _d in DTYPES:
    _SIGNATURES[f"adam_step_{_d}"] = (ctypes.c_void_p,) * 5 + (ctypes.c_int64,) * 3
    for _update, _names in MULTI_COLUMNS.items():
        _SIGNATURES[f"{_update}_multi_step_{_d}"] = (ctypes.c_void_p,) * (len(_names) + 1) + (
            ctypes.c_int64, ctypes.c_void_p) + (ctypes.c_int64,) * 3
    _SIGNATURES[f"sgd_momentum_step_{_d}"] = (ctypes.c_void_p,) * 4 + (ctypes.c_int64,) * 4
native.register_generated(LIBRARY, source, _SIGNATURES)
