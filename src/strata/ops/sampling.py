"""Spatial sampling (ATen's ``AffineGridGenerator.cpp`` and ``GridSampler.cpp``, as
decompositions): the grids of affine maps, and sampling images at arbitrary points.

``grid_sample`` reads ``input`` at normalized coordinates in [-1, 1] (x first), unnormalized
with or without ``align_corners`` and folded back by the padding mode (``border`` clamps,
``reflection`` mirrors); bilinear (trilinear) weights come from the coordinates themselves, so
the gradient reaches the grid as well as the input.
"""

import itertools

from . import factory, scatter
from . import meta_rules as R
from . import pointwise as P
from . import pointwise_composites as PC
from . import shape as S
from .nn import fmt
from .op import aten, defop, register_decomposition

affine_grid_generator = defop("affine_grid_generator(Tensor theta, SymInt[] size, "
                              "bool align_corners) -> Tensor")
grid_sampler_2d = defop("grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, "
                        "int padding_mode, bool align_corners) -> Tensor")
grid_sampler_3d = defop("grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, "
                        "int padding_mode, bool align_corners) -> Tensor")
GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _grid_line(steps, align_corners, like):
    """The normalized coordinates of ``steps`` pixel centres (or corners) in [-1, 1]."""
    if steps <= 1:
        return factory.full((steps,), 0, dtype=like.dtype, device=like.device)
    line = P.div(P.mul(factory.arange(0, steps, dtype=like.dtype, device=like.device), 2),
                 steps - 1)
    line = P.sub(line, 1)
    return line if align_corners else P.mul(line, (steps - 1) / steps)


def affine_base_grid(size, align_corners, like):
    """(1, H*W (or D*H*W), dims + 1): each output pixel's normalized (x, y[, z], 1)."""
    spatial = list(size[2:])
    lines = [_grid_line(s, align_corners, like) for s in spatial]
    dims = len(spatial)
    coords = []
    for i, line in enumerate(reversed(lines)):   # x varies along the last dim
        shape = [1] * dims
        shape[dims - 1 - i] = spatial[dims - 1 - i]
        coords.append(S.expand(S.view(line, shape), spatial))
    coords.append(factory.full(spatial, 1, dtype=like.dtype, device=like.device))
    return S.view(S.stack(coords, -1), [1, -1, dims + 1])


@register_decomposition(affine_grid_generator)
def _affine_grid(theta, size, align_corners):
    """Each output pixel's (x, y[, z], 1) times theta^T: (N, H, W, 2) or (N, D, H, W, 3)."""
    n, spatial = size[0], list(size[2:])
    if theta.shape[0] != n:   # ATen's bmm of the base grid by theta^T
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {len(spatial) + 1}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[2]}].")
    dims = len(spatial)
    base = affine_base_grid(size, align_corners, theta)
    grid = aten.matmul.default(S.expand(base, [n, base.shape[1], dims + 1]),
                               S.transpose(theta, 1, 2))
    return S.view(grid, [n] + spatial + [dims])


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return P.mul(P.div(P.add(coord, 1), 2), size - 1)
    return P.div(P.sub(P.mul(P.add(coord, 1), size), 1), 2)


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return P.mul(coord, 0)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = P.abs(P.sub(coord, low))
    extra = P.fmod(coord, span)
    flips = P.floor(P.div(coord, span))
    even = P.eq(P.remainder(flips, 2), 0)
    return P.where(even, P.add(extra, low), P.add(P.sub(span, extra), low))


def _source_index(coord, size, padding_mode, align_corners):
    return _fold(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _fold(coord, size, padding_mode, align_corners):
    """A pixel coordinate brought inside the image by the padding mode (zeros: unchanged)."""
    if padding_mode == 1:
        coord = P.clamp(coord, 0, size - 1)
    elif padding_mode == 2:
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else \
            _reflect(coord, -1, 2 * size - 1)
        coord = P.clamp(coord, 0, size - 1)
    return coord


def _gather_points(input, indices):
    """``input[n, c, ..., y, x]`` at integer (N, *out) maps ``indices`` (x first), 0 outside."""
    n, c = input.shape[:2]
    sizes = list(reversed(input.shape[2:]))          # W, H(, D): the order of grid coordinates
    inside, flat, stride = None, None, 1
    for index, size in zip(indices, sizes):
        within = P.logical_and(P.ge(index, 0), P.le(index, size - 1))
        inside = within if inside is None else P.logical_and(inside, within)
        term = P.mul(P.clamp(index, 0, size - 1), stride)
        flat = term if flat is None else P.add(flat, term)
        stride *= size
    out_shape = list(indices[0].shape[1:])
    gathered = scatter.gather(S.view(input, [n, c, stride]), 2,
                              S.expand(S.view(flat, [n, 1, -1]), [n, c, flat[0].numel()]))
    return P.mul(S.view(gathered, [n, c] + out_shape), S.unsqueeze(inside, 1))


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners):
    """(Bi/tri)linear or nearest sampling of ``input`` (N, C, [D,] H, W) at ``grid``
    (N, [Do,] Ho, Wo, 2 or 3) in [-1, 1] coordinates (x first); the gradient reaches both the
    input and the grid, as ``grid_sampler_2d/3d_backward``."""
    dims = input.ndim - 2
    if grid.ndim != dims + 2 or grid.shape[-1] != dims:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {dims} in last "
                           f"dimension, but got grid with sizes {fmt(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {fmt(input.shape)} and grid with sizes "
                           f"{fmt(grid.shape)}")
    if grid.dtype is not input.dtype:   # ATen's kernel reads the grid as the input's type
        raise RuntimeError(f"expected scalar type {R.type_name(input.dtype)} but found "
                           f"{R.type_name(grid.dtype)}")
    if interpolation_mode == 2:
        if dims != 2:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        return _bicubic(input, grid, padding_mode, align_corners)
    sizes = list(reversed(input.shape[2:]))
    coords = [_source_index(S.select(grid, -1, d), size, padding_mode, align_corners)
              for d, size in enumerate(sizes)]
    if interpolation_mode == 1:
        return _gather_points(input, [P.round(c).long() for c in coords])
    lows = [P.floor(c) for c in coords]
    uppers = [P.sub(c, low) for c, low in zip(coords, lows)]     # the weights of the upper side
    out = None
    for corner in itertools.product((0, 1), repeat=dims):
        weight, indices = None, []
        for bit, low, upper in zip(corner, lows, uppers):
            w = upper if bit else PC.rsub(upper, 1)
            weight = w if weight is None else P.mul(weight, w)
            indices.append(P.add(low.long(), bit) if bit else low.long())
        term = P.mul(_gather_points(input, indices), S.unsqueeze(weight, 1))
        out = term if out is None else P.add(out, term)
    return out


def _cubic_weights(t):
    """The 4 cubic-convolution weights (A = -0.75) of taps at -1, 0, 1, 2 for offset t."""
    A = -0.75

    def near(x):      # |x| <= 1
        return P.add(P.mul(P.mul(P.sub(P.mul(x, A + 2), A + 3), x), x), 1)

    def far(x):       # 1 < |x| < 2
        return P.sub(P.mul(P.add(P.mul(P.sub(P.mul(x, A), 5 * A), x), 8 * A), x), 4 * A)

    return [far(P.add(t, 1)), near(t), near(PC.rsub(t, 1)), far(PC.rsub(t, 2))]


def _bicubic(input, grid, padding_mode, align_corners):
    """Sixteen taps around each point, each tap folded inside by the padding mode on its own
    (ATen's ``get_value_bounded``), weighted by cubic convolution of the fractional offsets."""
    w, h = input.shape[-1], input.shape[-2]
    x = _unnormalize(S.select(grid, -1, 0), w, align_corners)
    y = _unnormalize(S.select(grid, -1, 1), h, align_corners)
    x0, y0 = P.floor(x), P.floor(y)
    wx, wy = _cubic_weights(P.sub(x, x0)), _cubic_weights(P.sub(y, y0))
    out = None
    for j in range(4):
        ty = P.round(_fold(P.add(y0, j - 1), h, padding_mode, align_corners)).long()
        for i in range(4):
            tx = P.round(_fold(P.add(x0, i - 1), w, padding_mode, align_corners)).long()
            term = P.mul(_gather_points(input, [tx, ty]), S.unsqueeze(P.mul(wx[i], wy[j]), 1))
            out = term if out is None else P.add(out, term)
    return out


register_decomposition(grid_sampler_2d)(_grid_sample)
register_decomposition(grid_sampler_3d)(_grid_sample)
