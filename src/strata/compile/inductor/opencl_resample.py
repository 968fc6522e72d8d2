"""The OpenCL device's resampling gathers: ``reflection_pad*``/``replication_pad*`` and the
``upsample_*`` ops.

Each is one work-item per output element (opencl_nn.py's ``window``) that works out where it
reads from its own index, as ATen's CUDA kernels do: a padded position reflects or clamps into
the input, an upsampled one computes its source index (and, for linear modes, its two taps per
dim and their weights) from the scale. Sizes, pads and scales are kernel arguments, so one
program serves every shape of a rank and dtype. The backward ops are the derivatives' own
(``index_add_`` along each dim, autograd/derivatives/nn.py), which run on the device too.
"""


from ...core import dtype as D
from ...ops import nn as NN
from .ir import ops
from .opencl_nn import _clamp, _geometry, _reduced, window
from .opencl_pointwise import new_output
from .opencl_rows import opmath

# --- reflection / replication padding -------------------------------------------------------------


def _reflected(o, d):
    """ATen's reflection index: i = o - left, mirrored about the first and the last element."""
    i = f"({o} - pl{d})"
    return f"({i} < 0 ? -{i} : {i} >= xs{d} ? 2 * (xs{d} - 1) - {i} : {i})"


def _replicated(o, d):
    return _clamp(f"{o} - pl{d}", f"xs{d}")


def _pad_term(source, dims):
    """The window term of a padding of the last ``dims`` dims: the input element it copies.
    Made once per (mode, dims): a term is part of its kernel's key."""
    def term(B, index, rindex):
        lead, tail = index[:-dims], index[-dims:]
        return B["inp"].load((*lead, *(source(o, d) for d, o in enumerate(tail))))
    return term


_PAD_TERMS = {(reflect, dims): _pad_term(_reflected if reflect else _replicated, dims)
              for reflect in (False, True) for dims in (1, 2, 3)}


def _mode_pad(op, reflect):
    def kernel(self, padding):
        spec = op.meta(self, padding)
        out = new_output(spec, self)
        if not out.numel():
            return out
        dims = len(padding) // 2
        # pads list (left, right) pairs from the last dim backwards
        lefts = [padding[2 * (dims - 1 - d)] for d in range(dims)]
        ints = {**_geometry("xs", self._shape[-dims:]), **_geometry("pl", lefts)}
        window(op.qualname, {"inp": self}, ints, [(out, _reduced)], (1,), "sum",
               _PAD_TERMS[reflect, dims], out.dtype.name)
        return out
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


# --- upsampling -----------------------------------------------------------------------------------


def _nearest_term(dims, exact):
    """The input element output index o reads along each upsampled dim: ATen's ``nearest_idx``
    (o itself at the same size, o / 2 at twice the size, else floor(o * scale)) or
    ``nearest_neighbor_exact_idx`` (floor((o + 0.5) * scale)), in float, clamped."""
    def term(B, index, rindex):
        lead, tail = index[:-dims], index[-dims:]
        at = []
        for d, o in enumerate(tail):
            dst = ops.index_expr(o, "float32")
            if exact:
                dst = ops.add(dst, ops.constant(0.5, "float32"))
            src = ops.floor(ops.mul(dst, ops.load(f"sc{d}", "0")))
            i = f"min((long)({src}), xs{d} - 1)"
            at.append(i if exact else
                      f"(os{d} == xs{d} ? {o} : os{d} == 2 * xs{d} ? ({o}) >> 1 : {i})")
        return B["inp"].load((*lead, *at))
    return term


def _linear_term(dims, align_corners):
    """One tap (rindex: 0 or 1 per dim) of linear interpolation: ATen's
    ``area_pixel_compute_source_index`` (o * scale aligned, else (o + 0.5) * scale - 0.5 kept
    at or above 0), the taps i0 = min(trunc(src), in - 1) and i0 + 1 where that is inside,
    weights 1 - l and l = clamp(src - i0, 0, 1); the element times the weights' product."""
    def term(B, index, rindex):
        lead, tail = index[:-dims], index[-dims:]
        at, weight = [], None
        for d, (o, tap) in enumerate(zip(tail, rindex)):
            scale = ops.load(f"sc{d}", "0")
            cdt = scale.dtype
            zero, half, one = (ops.constant(v, cdt) for v in (0, 0.5, 1))
            dst = ops.index_expr(o, cdt)
            if align_corners:
                src = ops.mul(scale, dst)
            else:
                src = ops.maximum(ops.sub(ops.mul(scale, ops.add(dst, half)), half), zero)
            i0 = ops.index_expr(f"min((long)({src}), xs{d} - 1)", "int64")
            at.append(f"({i0} + ({tap} == 1 && {i0} < xs{d} - 1))")
            right = ops.minimum(ops.maximum(ops.sub(src, ops.to_dtype(i0, cdt)), zero), one)
            w = ops.where(ops.index_expr(f"{tap} == 1", "bool"), right, ops.sub(one, right))
            weight = w if weight is None else ops.mul(weight, w)
        x = B["inp"].load((*lead, *at))
        return ops.mul(x if x.dtype == weight.dtype else ops.to_dtype(x, weight.dtype), weight)
    return term


def _cubic_weight(tap, t):
    """Keys' cubic convolution weight (A = -0.75) of tap 0..3 at fraction t, as ATen's
    ``get_cubic_upsample_coefficients``: the near formula for taps 1 and 2 (distances t and
    1 - t), the far one for taps 0 and 3 (t + 1 and 2 - t)."""
    dt = t.dtype
    one, a = ops.constant(1, dt), ops.constant(-0.75, dt)

    def near(x):
        inner = ops.sub(ops.mul(ops.add(a, ops.constant(2, dt)), x),
                        ops.add(a, ops.constant(3, dt)))
        return ops.add(ops.mul(ops.mul(inner, x), x), one)

    def far(x):
        five_a, eight_a, four_a = (ops.mul(ops.constant(k, dt), a) for k in (5, 8, 4))
        return ops.sub(ops.mul(ops.add(ops.mul(ops.sub(ops.mul(a, x), five_a), x), eight_a), x),
                       four_a)
    rest = ops.sub(one, t)
    weights = (far(ops.add(t, one)), near(t), near(rest), far(ops.add(rest, one)))
    chosen = weights[3]
    for k in (2, 1, 0):
        chosen = ops.where(ops.index_expr(f"{tap} == {k}", "bool"), weights[k], chosen)
    return chosen


def _cubic_term(dims, align_corners):
    """One of the 4 x 4 taps of bicubic interpolation: ATen's source index for cubic modes (o *
    scale aligned, else (o + 0.5) * scale - 0.5, not clamped), taps floor(src) - 1 .. + 2
    clamped into the input, weighted by ``_cubic_weight`` of the fraction."""
    def term(B, index, rindex):
        lead, tail = index[:-dims], index[-dims:]
        at, weight = [], None
        for d, (o, tap) in enumerate(zip(tail, rindex)):
            scale = ops.load(f"sc{d}", "0")
            cdt = scale.dtype
            half = ops.constant(0.5, cdt)
            dst = ops.index_expr(o, cdt)
            src = ops.mul(scale, dst) if align_corners else \
                ops.sub(ops.mul(scale, ops.add(dst, half)), half)
            start = ops.floor(src)
            at.append(_clamp(f"(long)({start}) - 1 + {tap}", f"xs{d}"))
            w = _cubic_weight(tap, ops.sub(src, start))
            weight = w if weight is None else ops.mul(weight, w)
        x = B["inp"].load((*lead, *at))
        return ops.mul(x if x.dtype == weight.dtype else ops.to_dtype(x, weight.dtype), weight)
    return term


_NEAREST_TERMS = {(dims, exact): _nearest_term(dims, exact)
                  for dims in (1, 2, 3) for exact in (False, True)}
_LINEAR_TERMS = {(dims, align): _linear_term(dims, align)
                 for dims in (1, 2, 3) for align in (False, True)}
_CUBIC_TERMS = {align: _cubic_term(2, align) for align in (False, True)}


def _nearest(op, exact):
    def kernel(self, output_size, *scales):
        spec = op.meta(self, output_size, *scales)
        out = new_output(spec, self)
        if not out.numel():
            return out
        sizes, dims = self._shape[2:], len(output_size)
        scales = (*scales, *(None,) * (dims - len(scales)))
        floats = {f"sc{d}": (NN.nearest_scale(n, o, s), D.float32)
                  for d, (n, o, s) in enumerate(zip(sizes, output_size, scales))}
        ints = {**_geometry("xs", sizes), **_geometry("os", output_size)}
        window(op.qualname, {"inp": self}, ints, [(out, _reduced)], (1,), "sum",
               _NEAREST_TERMS[dims, exact], out.dtype.name, floats)
        return out
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def _linear(op, taps=2, terms=_LINEAR_TERMS):
    """Linear modes (2 taps per dim), or bicubic (``taps`` 4, its ``terms``)."""
    def kernel(self, output_size, align_corners, *scales):
        spec = op.meta(self, output_size, align_corners, *scales)
        out = new_output(spec, self)
        if not out.numel():
            return out
        sizes, dims = self._shape[2:], len(output_size)
        scales = (*scales, *(None,) * (dims - len(scales)))
        compute = opmath(out.dtype)
        floats = {f"sc{d}": (NN.area_pixel_scale(n, o, align_corners, s), compute)
                  for d, (n, o, s) in enumerate(zip(sizes, output_size, scales))}
        term = terms[bool(align_corners)] if taps == 4 else terms[dims, bool(align_corners)]
        window(op.qualname, {"inp": self}, _geometry("xs", sizes), [(out, _reduced)],
               (taps,) * dims, "sum", term, compute.name, floats)
        return out
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def kernels() -> dict:
    table = {op: _mode_pad(op, mode == "reflection") for (mode, _), op in NN.MODE_PADS.items()}
    table.update({NN.upsample_nearest1d: _nearest(NN.upsample_nearest1d, False),
                  NN.upsample_nearest2d: _nearest(NN.upsample_nearest2d, False),
                  NN.upsample_nearest_exact1d: _nearest(NN.upsample_nearest_exact1d, True),
                  NN.upsample_nearest_exact2d: _nearest(NN.upsample_nearest_exact2d, True),
                  NN.upsample_linear1d: _linear(NN.upsample_linear1d),
                  NN.upsample_bilinear2d: _linear(NN.upsample_bilinear2d),
                  NN.upsample_nearest3d: _nearest(NN.upsample_nearest3d, False),
                  NN.upsample_trilinear3d: _linear(NN.upsample_trilinear3d),
                  NN.upsample_bicubic2d: _linear(NN.upsample_bicubic2d, 4, _CUBIC_TERMS)})
    return table
