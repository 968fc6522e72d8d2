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
threads split batch * channels.
"""

import ctypes

from ...backends.cpu import native
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


def source() -> str:
    body = "".join(_FORWARD.format(dtype=d, ctype=C_TYPES[d]) for d in DTYPES)
    return "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n" \
        + body


def _signatures():
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    out = {}
    for d in DTYPES:
        out[f"max_pool2d_{d}"] = (ptr,) * 3 + (i64,) * 14
        out[f"max_pool2d_inside_{d}"] = (ptr,) * 4 + (i64,) * 8
        out[f"max_pool2d_backward_{d}"] = (ptr,) * 3 + (i64,) * 4
    return out


native.register_generated(LIBRARY, source, _signatures())
