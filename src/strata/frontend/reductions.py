"""Frontends of the reductions and sorting families whose Python signature differs from their
schema.

PyTorch's Python API picks an overload by argument types (``max(x)``, ``max(x, dim)``,
``max(x, other)``), keeps legacy spellings (``std(x, unbiased=False)``, ``sum(x, axis=0)``) and
returns named tuples (``strata.return_types.max(values, indices)``); the ops underneath keep
PyTorch's schemas. Each wrapper calls its op with every argument positionally, so the dispatcher
skips argument binding.
"""

import builtins
import math

from .. import return_types as RT
from ..dispatch.dispatcher import direct_caller
from ..functions import write_out
from ..ops import aten
from ..ops import pointwise as P
from ..ops import reductions as RD
from ..ops import sorting as RS
from ..ops.meta_rules import is_tensor


def _out(result, out):
    """PyTorch's ``out=`` for one tensor or a tuple of them."""
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            write_out(o, r)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    return write_out(out, result)


# --- reductions -----------------------------------------------------------------------------------

# ``sum(x)`` is ATen's dim-less overload (SumBackward0); an explicit ``dim=None`` picks the dim
# overload (SumBackward1), which reduces every dim as ``dim=[]`` does: the frontends pass ``[]``.
# (inlined in each: ``x.sum()`` is on the hot path)
_NO_DIM = object()


def sum(input, dim=_NO_DIM, keepdim=False, *, dtype=None, axis=None, out=None):
    """``sum(x)``, ``sum(x, dim, keepdim=False, *, dtype=None)``; ``axis`` is NumPy's name."""
    if dim is _NO_DIM:
        dim = axis
    elif dim is None:
        dim = []
    result = _sum(input, dim, keepdim, dtype)
    return result if out is None else write_out(out, result)


_sum = direct_caller(RD.sum)   # Note [Operator fast path]


def mean(input, dim=_NO_DIM, keepdim=False, *, dtype=None, axis=None, out=None):
    """``mean(x)``, ``mean(x, dim, keepdim=False, *, dtype=None)``; ``axis`` is NumPy's name."""
    if dim is _NO_DIM:
        dim = axis
    elif dim is None:
        dim = []
    result = RD.mean(input, dim, keepdim, dtype)
    return result if out is None else write_out(out, result)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """``prod(x, *, dtype)`` or ``prod(x, dim, keepdim=False, *, dtype)``: one int dim only."""
    if dim is None:
        return _out(RD.prod(input, dtype), out)
    return _out(RD.prod_dim(input, dim, keepdim, dtype), out)


def _extremum(name, full, by_dim, pointwise, rtype):
    def extremum(input, dim=None, keepdim=False, *, other=None, out=None):
        if dim is None and other is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments: "
                                f"keepdim=True needs a dim")
            result = full(input)
        elif other is not None or is_tensor(dim):  # max(x, y): the elementwise maximum
            result = pointwise(input, dim if other is None else other)
        else:
            result = rtype(*by_dim(input, dim, keepdim))
        return result if out is None else _out(result, out)
    extremum.__name__ = extremum.__qualname__ = name
    extremum.__doc__ = (f"``{name}(x)`` (all elements), ``{name}(x, dim, keepdim=False)`` "
                        f"(values, indices), ``{name}(x, other)`` (elementwise).")
    return extremum


max = _extremum("max", RD.max, RD.max_dim, P.maximum, RT.max)
min = _extremum("min", RD.min, RD.min_dim, P.minimum, RT.min)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    return _out(RT.aminmax(*RD.aminmax(input, dim, keepdim)), out)


def _variance(name, op):
    def variance(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
        if isinstance(dim, bool):  # std(x, unbiased)
            dim, unbiased = None, dim
        if unbiased is not None:
            if correction is not None:
                raise TypeError(f"{name}() received an invalid combination of arguments: "
                                f"'unbiased' and 'correction' cannot both be given")
            correction = 1 if unbiased else 0
        return _out(op(input, dim, correction, keepdim), out)
    variance.__name__ = variance.__qualname__ = name
    variance.__doc__ = (f"``{name}(x, dim=None, *, correction=1, keepdim=False)``, or the legacy "
                        f"``{name}(x, unbiased)`` / ``{name}(x, dim, unbiased, keepdim)``.")
    return variance


std = _variance("std", RD.std)
var = _variance("var", RD.var)
std_mean = _variance("std_mean", RD.std_mean)
var_mean = _variance("var_mean", RD.var_mean)


def count_nonzero(input, dim=None):
    if dim is None or isinstance(dim, int):
        return RD.count_nonzero(input, dim)
    return RD.count_nonzero_dims(input, list(dim))


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm``: 'fro' and numbers are vector norms over ``dim`` (all dims by default);
    'nuc' and 'fro' over more than two dims are matrix norms (``linalg.matrix_norm``)."""
    dims = [dim] if isinstance(dim, int) else dim
    if not isinstance(p, str):
        result = RD.vector_norm(input, 2 if p is None else p, dims, keepdim, dtype)
    elif p == "fro" and (dims is None or len(dims) <= 2):
        result = RD.vector_norm(input, 2, dims, keepdim, dtype)
    else:
        dims = list(range(input.ndim)) if dims is None else dims
        result = aten.linalg_matrix_norm.str_ord(input, p, dims, keepdim, dtype=dtype)
    return _out(result, out)


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


# --- scans ----------------------------------------------------------------------------------------

def cummax(input, dim, *, out=None):
    return _out(RT.cummax(*RD.cummax(input, dim)), out)


def cummin(input, dim, *, out=None):
    return _out(RT.cummin(*RD.cummin(input, dim)), out)


# --- sorting and selection --------------------------------------------------------------------

def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    return _out(RT.sort(*RS.sort(input, stable, dim, descending)), out)


def argsort(input, dim=-1, descending=False, *, stable=False):
    return RS.argsort_stable(input, stable, dim, descending)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    return _out(RT.topk(*RS.topk(input, k, dim, largest, sorted)), out)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    return _out(RT.kthvalue(*RS.kthvalue(input, k, dim, keepdim)), out)


def _median(name, full, by_dim, rtype):
    def median(input, dim=None, keepdim=False, *, out=None):
        if dim is None:
            return _out(full(input), out)
        return _out(rtype(*by_dim(input, dim, keepdim)), out)
    median.__name__ = median.__qualname__ = name
    median.__doc__ = (f"``{name}(x)``: the lower median of all elements; ``{name}(x, dim)``: "
                      f"(values, indices) along dim.")
    return median


median = _median("median", RS.median, RS.median_dim, RT.median)
nanmedian = _median("nanmedian", RS.nanmedian, RS.nanmedian_dim, RT.nanmedian)


def mode(input, dim=-1, keepdim=False, *, out=None):
    return _out(RT.mode(*RS.mode(input, dim, keepdim)), out)


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    """A tensor alone, or a tuple with the outputs that were asked for (as torch.unique)."""
    if not (return_inverse or return_counts):
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + \
        ((counts,) if return_counts else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        outs = RS.unique(input, sorted, return_inverse, return_counts)
    else:
        outs = RS.unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _unique_result(*outs, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    outs = RS.unique_consecutive(input, return_inverse, return_counts, dim)
    return _unique_result(*outs, return_inverse, return_counts)


def _quantile_frontend(name, tensor_op, scalar_op):
    def function(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
        if out is not None and out.dtype is not input.dtype:
            raise RuntimeError(f"{name}() out tensor must be same dtype as the input tensor")
        op = tensor_op if is_tensor(q) else scalar_op
        return _out(op(input, q, dim, keepdim, interpolation=interpolation), out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = ("The q-th quantiles of ``input`` along ``dim`` (q: a float or a 1-D "
                        "tensor), interpolating as ``interpolation`` says.")
    return function


quantile = _quantile_frontend("quantile", RS.quantile, RS.quantile_scalar)
nanquantile = _quantile_frontend("nanquantile", RS.nanquantile, RS.nanquantile_scalar)


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number)."""
    if is_tensor(elements):
        op = RS.isin if is_tensor(test_elements) else RS.isin_tensor_scalar
    else:
        op = RS.isin_scalar_tensor
    return _out(op(elements, test_elements, assume_unique=assume_unique, invert=invert), out)


def _trapezoid_frontend(name, x_op, dx_op):
    def function(y, x=None, *, dx=None, dim=-1):
        if (x is not None and dx is not None) or not (x is None or is_tensor(x)):
            raise TypeError(f"{name}() received an invalid combination of arguments: x must "
                            f"be a Tensor, and only one of x and dx may be given")
        return x_op(y, x, dim=dim) if x is not None else dx_op(y, dx=1 if dx is None else dx,
                                                               dim=dim)
    function.__name__ = function.__qualname__ = name
    running = " (running sums)" if "cum" in name else ""
    function.__doc__ = (f"Integral of ``y`` along ``dim`` by the trapezoid rule, at sample "
                        f"points ``x`` or spacing ``dx``{running}.")
    return function


trapezoid = _trapezoid_frontend("trapezoid", RD.trapezoid, RD.trapezoid_dx)
trapz = _trapezoid_frontend("trapz", RD.trapz, RD.trapz_dx)
cumulative_trapezoid = _trapezoid_frontend("cumulative_trapezoid", RD.cumulative_trapezoid,
                                           RD.cumulative_trapezoid_dx)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)``: ``bins`` equal bins over ``range`` (default: the input's min and
    max), or the given increasing edges; ``density`` normalises to a probability density."""
    if is_tensor(bins):
        result = RS.histogram_bins_tensor(input, bins, weight=weight, density=density)
    else:
        result = RS.histogram_bin_ct(input, bins, range=range, weight=weight, density=density)
    return _out(RT.histogram(*result), out)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)`` of the rows of ``input`` (its last dim holds the D coordinates):
    per dim ``bins[d]`` equal bins over ``range[2d:2d+2]`` (default: that coordinate's min and
    max) or the given edges, as ``histogram`` makes them; a point counts in the bin whose
    half-open interval holds it (the last bin closed), points outside none count."""
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = input.shape[-1]
    points = input.reshape(-1, dims)
    if isinstance(bins, int) or is_tensor(bins):
        bins = [bins] * dims
    if len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                           f"should have {2 * dims} elements, but got {len(range)}")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape [{', '.join(map(str, input.shape))}] and "
                           f"weight with shape [{', '.join(map(str, weight.shape))}]")
    for d in builtins.range(dims):
        if range is not None and range[2 * d] > range[2 * d + 1]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{range[2 * d]:g} max {range[2 * d + 1]:g} for dimension {d}")
    edges, index, inside = [], None, None
    for d in builtins.range(dims):
        column = points[:, d]
        if is_tensor(bins[d]):
            e = histogram(column, bins[d]).bin_edges
        else:
            e = histogram(column, bins[d], range=None if range is None else
                          [range[2 * d], range[2 * d + 1]]).bin_edges
        edges.append(e)
        count = e.numel() - 1
        # searchsorted's right side, the last edge closing the last bin
        at = (aten.searchsorted.Tensor(e, column.contiguous(), right=True) - 1).clamp(
            0, count - 1)
        ok = (column >= e[0]) & (column <= e[-1])
        index = at if index is None else index * count + at
        inside = ok if inside is None else inside & ok
    sizes = [e.numel() - 1 for e in edges]
    w = inside.to(input.dtype) if weight is None else \
        weight.reshape(-1).to(input.dtype) * inside.to(input.dtype)
    hist = aten.bincount.default(index, w, math.prod(sizes)).to(input.dtype).reshape(sizes)
    if density:
        volume = None
        for d, e in enumerate(edges):
            width = (e[1:] - e[:-1]).reshape([-1 if k == d else 1 for k in builtins.range(dims)])
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return RT.histogramdd(hist, tuple(edges))


_SHARED = {
    "sum": sum, "mean": mean, "prod": prod, "max": max, "min": min, "aminmax": aminmax, "std": std,
    "var": var, "count_nonzero": count_nonzero, "cummax": cummax, "cummin": cummin,
    "sort": sort, "argsort": argsort, "topk": topk, "kthvalue": kthvalue, "median": median,
    "nanmedian": nanmedian, "mode": mode, "unique": unique,
    "unique_consecutive": unique_consecutive, "quantile": quantile, "nanquantile": nanquantile,
    "histogram": histogram,
}
METHODS = dict(_SHARED, norm=_norm_method)
FUNCTIONS = dict(_SHARED, norm=norm, std_mean=std_mean, var_mean=var_mean, isin=isin,
                 histogramdd=histogramdd,
                 trapezoid=trapezoid, trapz=trapz, cumulative_trapezoid=cumulative_trapezoid)
