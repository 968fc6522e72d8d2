"""Eager CPU kernels of max_pool2d and its backward (issue 9 §5): contiguous NCHW float planes.

NumPy pools one kernel offset at a time (backends/cpu/pooling.py): a strided gather, a compare,
a maximum and an index update per offset, each a pass over the output, and the backward one
masked scatter per offset. ATen's ``cpu_max_pool`` / ``cpu_max_pool_backward``
(``aten/src/ATen/native/cpu/MaxPoolKernel.cpp``) loop over the output once. The C here visits
each window's elements in ATen's order, vectorised over the outputs: over a whole plane when
every window lies inside the input (``max_pool2d_inside``), else over one output row (the
window bounds clipped per kernel column). Window bounds and the NaN rule are ATen's: a window
starts at its first element inside the input, and a later element replaces the maximum when it
is greater or NaN (ties keep the first, the last NaN wins). The backward zeroes each input
plane, then adds each output's gradient at its index, in output order. The C is printed once
per dtype and built and cached by the CPU backend's one build path (backends/cpu/native.py), as
eager.py's loop-IR kernels are; each call covers the planes ``[lo, hi)``, so the caller's
threads split batch * channels. ``max_pool2d_2x2`` and ``max_pool2d_backward_masked`` are the
compiled graph's Externs for a pool around a ReLU (Note [2x2 pools in one pass]).
"""

import ctypes

import numpy as np

from ...backends.cpu import native, native_pool
from .ir import C_TYPES

LIBRARY = "eager_pool"
DTYPES = ("float32", "float64")

_FORWARD = """
void max_pool2d_{dtype}(const {ctype}* restrict in, {ctype}* restrict out,
                        int64_t* restrict indices, int64_t h, int64_t w, int64_t oh, int64_t ow,
                        int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                        int64_t dh, int64_t dw, int64_t lo, int64_t hi) {{
    for (int64_t p = lo; p < hi; p++) {{
        const {ctype}* x = in + p * h * w;
        for (int64_t i = 0; i < oh; i++) {{
            {ctype}* best = out + (p * oh + i) * ow;
            int64_t* best_index = indices + (p * oh + i) * ow;
            int64_t r0 = i * sh - ph;
            const int64_t r1 = r0 + (kh - 1) * dh + 1 < h ? r0 + (kh - 1) * dh + 1 : h;
            while (r0 < 0) r0 += dh;
            for (int64_t j = 0; j < ow; j++) {{   /* the window's first element inside */
                int64_t c0 = j * sw - pw;
                while (c0 < 0) c0 += dw;
                best[j] = -INFINITY;
                best_index[j] = r0 * w + c0;
            }}
            for (int64_t r = r0; r < r1; r += dh) {{
                const {ctype}* row = x + r * w;
                for (int64_t kc = 0; kc < kw; kc++) {{
                    /* the outputs j whose column j * sw + shift lies inside the input */
                    const int64_t shift = kc * dw - pw;
                    const int64_t j0 = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
                    int64_t j1 = w - shift <= 0 ? 0 : (w - shift + sw - 1) / sw;
                    j1 = j1 < ow ? j1 : ow;
                    #pragma omp simd
                    for (int64_t j = j0; j < j1; j++) {{
                        const int64_t c = j * sw + shift;
                        const {ctype} v = row[c];
                        const bool take = (v > best[j]) | (v != v);
                        best[j] = take ? v : best[j];
                        best_index[j] = take ? r * w + c : best_index[j];
                    }}
                }}
            }}
        }}
    }}
}}

/* every window inside the input (no padding, no overhang): each window slot is one pass over
   the plane's outputs, vectorised over all of them; ``base`` holds each output's first
   element */
void max_pool2d_inside_{dtype}(const {ctype}* restrict in, const int64_t* restrict base,
                               {ctype}* restrict out, int64_t* restrict indices,
                               int64_t plane_in, int64_t plane_out, int64_t kh, int64_t kw,
                               int64_t row_step, int64_t dw, int64_t lo, int64_t hi) {{
    for (int64_t p = lo; p < hi; p++) {{
        const {ctype}* x = in + p * plane_in;
        {ctype}* best = out + p * plane_out;
        int64_t* best_index = indices + p * plane_out;
        for (int64_t k = 0; k < plane_out; k++) {{
            best[k] = -INFINITY;
            best_index[k] = base[k];
        }}
        for (int64_t kr = 0; kr < kh; kr++) {{
            for (int64_t kc = 0; kc < kw; kc++) {{
                const int64_t shift = kr * row_step + kc * dw;
                #pragma omp simd
                for (int64_t k = 0; k < plane_out; k++) {{
                    const int64_t c = base[k] + shift;
                    const {ctype} v = x[c];
                    const bool take = (v > best[k]) | (v != v);
                    best[k] = take ? v : best[k];
                    best_index[k] = take ? c : best_index[k];
                }}
            }}
        }}
    }}
}}

void max_pool2d_backward_{dtype}(const {ctype}* restrict grad_out,
                                 const int64_t* restrict indices, {ctype}* restrict grad_in,
                                 int64_t plane_in, int64_t plane_out, int64_t lo, int64_t hi) {{
    for (int64_t p = lo; p < hi; p++) {{   /* each plane zeroed here, while it is in cache */
        {ctype}* g = grad_in + p * plane_in;
        memset(g, 0, plane_in * sizeof({ctype}));
        for (int64_t k = 0; k < plane_out; k++) {{
            const int64_t at = indices[p * plane_out + k];
            if (at >= 0 && at < plane_in) g[at] += grad_out[p * plane_out + k];
        }}
    }}
}}
"""


# Note [2x2 pools in one pass]: the compiled graph's max pooling around a ReLU (lowering_nn.py)
# as Externs. The generated loops over outputs computed a 2x2 pool's values and indices in two
# passes over each window, and its backward, under ReLU's gradient (``threshold_backward``), as
# a gather per input element of its window's index and gradient (``idx[r / 2][c / 2]``), which
# gcc vectorises as gathers, three per 16 elements: 0.8 ms, the largest kernel of
# benchmarks/training.py's CNN step. Here the forward reads each output row's two input rows as
# even/odd pairs (strided loads gcc vectorises with shuffles), values and indices in one pass;
# the backward is eager's scatter (each window's gradient added at its index: one plane zeroed
# in cache, then one store per window, 4x fewer than the gather's) with the ReLU mask applied
# at each add. Rows are a few windows long (13, 5): gcc's 16-float vectors would leave a 13-long
# row to its scalar tail, so the forward takes 8-float ones (ROWS_OF_A_FEW): 1.0 -> 0.3 ms.
# One thread, the CNN's shapes (32x32x26x26, 32x64x11x11): forward 0.40 -> 0.16 and 0.28 ->
# 0.09 ms, backward 0.82 -> 0.28 and 0.34 -> 0.06 ms (C micro-benchmarks, docs/performance.md).
_ROWS_OF_A_FEW = '#define ROWS_OF_A_FEW __attribute__((target("prefer-vector-width=256")))\n'
_TWO_BY_TWO = """
ROWS_OF_A_FEW void max_pool2d_2x2_{dtype}(const {ctype}* restrict in, {ctype}* restrict out,
                            int64_t* restrict indices, int64_t h, int64_t w, int64_t oh,
                            int64_t ow, int64_t lo, int64_t hi) {{
    for (int64_t p = lo; p < hi; p++) {{
        for (int64_t i = 0; i < oh; i++) {{
            const {ctype}* top = in + p * h * w + 2 * i * w;
            const {ctype}* bottom = top + w;
            {ctype}* best = out + (p * oh + i) * ow;
            int64_t* best_index = indices + (p * oh + i) * ow;
            const int64_t first = 2 * i * w;
            #pragma omp simd
            for (int64_t j = 0; j < ow; j++) {{   /* ATen's order; greater or NaN replaces */
                {ctype} v = top[2 * j];
                int64_t at = first + 2 * j;
                bool take = (top[2 * j + 1] > v) | (top[2 * j + 1] != top[2 * j + 1]);
                v = take ? top[2 * j + 1] : v;
                at = take ? first + 2 * j + 1 : at;
                take = (bottom[2 * j] > v) | (bottom[2 * j] != bottom[2 * j]);
                v = take ? bottom[2 * j] : v;
                at = take ? first + w + 2 * j : at;
                take = (bottom[2 * j + 1] > v) | (bottom[2 * j + 1] != bottom[2 * j + 1]);
                best[j] = take ? bottom[2 * j + 1] : v;
                best_index[j] = take ? first + w + 2 * j + 1 : at;
            }}
        }}
    }}
}}

/* eager's backward (each output's gradient added at its index, in output order) with ReLU's
   gradient, threshold_backward(., mask, threshold), applied at each add: an element whose mask
   is <= threshold stays 0 whatever is added there, as it would be masked after the sum */
void max_pool2d_backward_masked_{dtype}(const {ctype}* restrict grad_out,
                                        const int64_t* restrict indices,
                                        const {ctype}* restrict mask, {ctype}* restrict grad_in,
                                        const double* restrict threshold, int64_t plane_in,
                                        int64_t plane_out, int64_t lo, int64_t hi) {{
    const {ctype} limit = ({ctype})*threshold;
    for (int64_t p = lo; p < hi; p++) {{
        {ctype}* g = grad_in + p * plane_in;
        const {ctype}* m = mask + p * plane_in;
        memset(g, 0, plane_in * sizeof({ctype}));
        for (int64_t k = 0; k < plane_out; k++) {{
            const int64_t at = indices[p * plane_out + k];
            if (at >= 0 && at < plane_in)
                g[at] = m[at] <= limit ? 0 : g[at] + grad_out[p * plane_out + k];
        }}
    }}
}}
"""


# Input elements per chunk of the 2x2 pools on the pool's threads: ATen's grain. The CPU
# backend's GRAIN_SIZE (8x more) kept the CNN step's second pool (32x64x11x11) to one chunk, all
# of it on the caller's thread; the compiled kernels these replace split by their measured time
# (autotune.py), into chunks of ~25 us, which this is about.
POOL_GRAIN = 1 << 15


def _two_by_two(name, dtype):
    fn = native.function(LIBRARY, f"{name}_{dtype.name}")
    if fn is None:
        raise RuntimeError(f"inductor: the compiled graph's {name} needs the C kernels of "
                           f"compile/inductor/eager_pool.py, which could not be built")
    return fn


def max_pool2d_2x2(x):
    """(values, int64 indices) of the 2x2, stride-2 max pool of the contiguous float array ``x``
    (N, C, H, W) in one pass (Note [2x2 pools in one pass]), on the pool's threads."""
    fn = _two_by_two("max_pool2d_2x2", x.dtype)
    x = np.ascontiguousarray(x)
    h, w = x.shape[-2:]
    values = np.empty(x.shape[:-2] + (h // 2, w // 2), x.dtype)
    indices = np.empty(values.shape, np.int64)
    src, dst, where = x.ctypes.data, values.ctypes.data, indices.ctypes.data
    native_pool.parallel_call(fn, [src, dst, where, h, w, h // 2, w // 2], 0,
                              x.size // (h * w), max(1, POOL_GRAIN // (h * w)))
    return values, indices


def max_pool2d_backward_masked(grad, indices, mask, threshold):
    """``threshold_backward(max_pool2d_with_indices_backward(grad, ., indices), mask,
    threshold)`` in one pass (Note [2x2 pools in one pass]): the input gradient, of ``mask``'s
    shape, from the output gradient ``grad`` and its ``indices``, on the pool's threads."""
    fn = _two_by_two("max_pool2d_backward_masked", grad.dtype)
    plane_in, plane_out = mask.shape[-2] * mask.shape[-1], grad.shape[-2] * grad.shape[-1]
    out = np.empty(mask.shape, grad.dtype)   # each plane zeroed by the kernel, on the pool
    grad, indices, mask = map(np.ascontiguousarray, (grad, indices, mask))
    # the threshold through a pointer: a function of pointers and int64s only has a native
    # pool task entry (Note [Task entries]); with a double it ran on the Python pool
    limit = np.array([threshold], np.float64)
    pointers = [grad.ctypes.data, indices.ctypes.data, mask.ctypes.data, out.ctypes.data,
                limit.ctypes.data, plane_in, plane_out]
    native_pool.parallel_call(fn, pointers, 0, out.size // plane_in,
                              max(1, POOL_GRAIN // plane_in))
    return out


def source() -> str:
    body = "".join((_FORWARD + _TWO_BY_TWO).format(dtype=d, ctype=C_TYPES[d]) for d in DTYPES)
    return "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n" \
        + _ROWS_OF_A_FEW + body


def _signatures():
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    out = {}
    for d in DTYPES:
        out[f"max_pool2d_{d}"] = (ptr,) * 3 + (i64,) * 14
        out[f"max_pool2d_inside_{d}"] = (ptr,) * 4 + (i64,) * 8
        out[f"max_pool2d_backward_{d}"] = (ptr,) * 3 + (i64,) * 4
        out[f"max_pool2d_2x2_{d}"] = (ptr,) * 3 + (i64,) * 6
        out[f"max_pool2d_backward_masked_{d}"] = (ptr,) * 5 + (i64,) * 4
    return out


native.register_generated(LIBRARY, source, _signatures())
