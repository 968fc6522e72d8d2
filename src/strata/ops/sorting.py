"""Sorting, selection and counting: sort, topk, kthvalue, median, mode, unique, bincount, histc.

Ops that return (values, indices) give int64 indices. Sorting treats NaN as larger than every
number (so it sorts last ascending and first descending), as PyTorch does. ``unique`` and
``bincount`` have output shapes that depend on the data: their meta functions validate the
arguments and then refuse, as PyTorch's Meta device does, and their CPU kernels call the same
validation.
"""

from ..core import dtype as D
from ..core.shape import wrap_dim
from . import meta_rules as R
from .op import TensorSpec, defop, register_decomposition
from .reductions import check_reduced_dim, one_dim_meta

_T = R.type_name


def _values_indices(shape, dtype):
    return TensorSpec(shape, dtype), TensorSpec(shape, D.int64)


def _not_for(kernel_name, self, *dtypes):
    """PyTorch's dtype dispatch error for a kernel that does not cover ``self``'s dtype."""
    if self.dtype in dtypes:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_T(self.dtype)}'")


# --- sort -----------------------------------------------------------------------------------------

def _sort_meta(self, stable=None, dim=-1, descending=False):
    if self.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    wrap_dim(dim, self.ndim)
    return _values_indices(tuple(self.shape), self.dtype)


sort = defop("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
             "(Tensor values, Tensor indices)", _sort_meta, tags=("sort",))
sort_default = defop("sort(Tensor self, int dim=-1, bool descending=False) -> "
                     "(Tensor values, Tensor indices)")
argsort = defop("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor")
argsort_stable = defop("argsort.stable(Tensor self, *, bool stable, int dim=-1, "
                       "bool descending=False) -> Tensor")
msort = defop("msort(Tensor self) -> Tensor", method=True, function=True)


@register_decomposition(sort_default)
def _sort_default(self, dim=-1, descending=False):
    return sort(self, False, dim, descending)


@register_decomposition(argsort)
def _argsort(self, dim=-1, descending=False):
    return sort(self, False, dim, descending)[1]


@register_decomposition(argsort_stable)
def _argsort_stable(self, stable, dim=-1, descending=False):
    return sort(self, stable, dim, descending)[1]


@register_decomposition(msort)
def _msort(self):
    return sort(self, False, 0, False)[0]


# --- selection ------------------------------------------------------------------------------------

def _topk_meta(self, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if self.dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if self.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    shape = list(self.shape)
    if shape:
        shape[d] = k
    return _values_indices(tuple(shape), self.dtype)


def _kthvalue_meta(self, k, dim=-1, keepdim=False):
    spec, d = one_dim_meta(self, dim, keepdim, self.dtype)
    check_reduced_dim("kthvalue", self, d)
    size = self.shape[d] if self.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _not_for("kthvalue_cpu", self, D.bool_)
    return spec, TensorSpec(spec.shape, D.int64)


def _median_meta(self):
    _not_for("median_cpu", self, D.bool_)
    return TensorSpec((), self.dtype)


def _median_dim_meta(name):
    def meta(self, dim, keepdim=False):
        spec, d = one_dim_meta(self, dim, keepdim, self.dtype)
        check_reduced_dim(name, self, d)
        _not_for("median_out", self, D.bool_)
        return spec, TensorSpec(spec.shape, D.int64)
    return meta


def _mode_meta(self, dim=-1, keepdim=False):
    spec, d = one_dim_meta(self, dim, keepdim, self.dtype)
    check_reduced_dim("mode", self, d)
    return spec, TensorSpec(spec.shape, D.int64)


topk = defop("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
             "(Tensor values, Tensor indices)", _topk_meta, tags=("sort",))
kthvalue = defop("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
                 "(Tensor values, Tensor indices)", _kthvalue_meta, tags=("sort",))
median = defop("median(Tensor self) -> Tensor", _median_meta, tags=("sort",))
median_dim = defop("median.dim(Tensor self, int dim, bool keepdim=False) -> "
                   "(Tensor values, Tensor indices)", _median_dim_meta("median"), tags=("sort",))
nanmedian = defop("nanmedian(Tensor self) -> Tensor", _median_meta, tags=("sort",))
nanmedian_dim = defop("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> "
                      "(Tensor values, Tensor indices)", _median_dim_meta("nanmedian"),
                      tags=("sort",))
mode = defop("mode(Tensor self, int dim=-1, bool keepdim=False) -> "
             "(Tensor values, Tensor indices)", _mode_meta, tags=("sort",))


# --- uniqueness and counting (output shapes depend on the data) -----------------------------------

def check_unique_dim(self, dim):
    """``unique(dim=)``: validate ``dim`` and return it wrapped."""
    if self.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, self.ndim)
    if self.numel() == 0 and self.shape[d] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    return d


def check_bincount(self, weights, minlength):
    """Validate bincount's metadata; return the output dtype."""
    if self.dtype.category == D.FLOATING or self.dtype is D.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_T(self.dtype)}'")
    if self.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return D.int64
    if weights.ndim != 1 or weights.shape[0] != self.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # float32 weights keep their dtype; every other weight dtype counts in float64
    return D.float32 if weights.dtype is D.float32 else D.float64


def _data_dependent(name, check):
    """The meta of an op whose output shape depends on the input's values: validate, refuse."""
    def meta(self, *args):
        check(self, *args)
        raise NotImplementedError(f"aten::{name}: attempted to run this operator with Meta "
                                  f"tensors, but its output shape depends on the values of its "
                                  f"input, which Meta tensors do not have")
    return meta


def _check_unique(self, sorted=True, return_inverse=False, return_counts=False):
    """Any dtype and shape is fine."""


def _check_unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    check_unique_dim(self, dim)


def _check_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        check_unique_dim(self, dim)


unique = defop("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
               "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
               _data_dependent("_unique2", _check_unique), tags=("sort",))
unique_dim = defop("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
                   "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
                   _data_dependent("unique_dim", _check_unique_dim), tags=("sort",))
unique_consecutive = defop("unique_consecutive(Tensor self, bool return_inverse=False, "
                           "bool return_counts=False, int? dim=None) -> "
                           "(Tensor, Tensor, Tensor)",
                           _data_dependent("unique_consecutive", _check_unique_consecutive),
                           tags=("sort",))
bincount = defop("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
                 _data_dependent("bincount", check_bincount), method=True, function=True)


def _histc_meta(self, bins=100, min=0, max=0):
    if self.dtype.category != D.FLOATING:
        kernel = "linspace_cpu" if self.dtype is D.bool_ else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_T(self.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    return TensorSpec((bins,), self.dtype)


histc = defop("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
              _histc_meta, method=True, function=True)


# --- quantiles: a sort, then a gather and a lerp between the neighbouring ranks -------------------
_QUANTILE = "(Tensor self, {q}, int? dim=None, bool keepdim=False, *, str interpolation='linear')"
quantile = defop("quantile" + _QUANTILE.format(q="Tensor q") + " -> Tensor")
quantile_scalar = defop("quantile.scalar" + _QUANTILE.format(q="float q") + " -> Tensor")
nanquantile = defop("nanquantile" + _QUANTILE.format(q="Tensor q") + " -> Tensor")
nanquantile_scalar = defop("nanquantile.scalar" + _QUANTILE.format(q="float q") + " -> Tensor")
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(name, self, q, interpolation):
    if self.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if R.is_tensor(q):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not self.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if self.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not R.is_tensor(q):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    elif q.device.type != "meta" and q.numel() and \
            not bool(q.ge(0).logical_and(q.le(1)).all().item()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")


def _quantile(name, self, q, dim, keepdim, interpolation, ignore_nan):
    """``Sorting.cpp``'s quantile_compute: ranks q * (n - 1) into the sorted reduced dim."""
    from .factory import scalar_tensor
    _check_quantile(name, self, q, interpolation)
    if dim is None:
        out_shape = [1] * self.ndim if keepdim else []
        sorted_ = sort(self.reshape(-1), False, -1, False)[0]
    else:
        dim = wrap_dim(dim, self.ndim)
        out_shape = list(self.shape)
        if keepdim:
            out_shape[dim:dim + 1] = [1] if self.ndim else []
        else:
            del out_shape[dim:dim + 1]
        sorted_ = sort(self.movedim(dim, -1) if self.ndim else self.reshape(1), False, -1,
                       False)[0]
    qs = q.reshape(-1) if R.is_tensor(q) else scalar_tensor(q, dtype=self.dtype,
                                                             device=self.device).reshape(1)
    last = sorted_.shape[-1] - 1
    if ignore_nan:
        count = sorted_.isnan().logical_not().sum(-1, keepdim=True)
        ranks = qs.mul(count.sub(1))
        ranks = ranks.masked_fill(ranks.lt(0), 0)
    else:
        ranks = qs.mul(last)
        ranks = ranks.masked_fill(sorted_.isnan().any(-1, keepdim=True), last)
    rounding = {"lower": "floor", "higher": "ceil", "nearest": "round"}.get(interpolation)
    if rounding is not None:
        ranks = getattr(ranks, rounding)()
    ranks = ranks.expand(*sorted_.shape[:-1], qs.shape[0])
    below = sorted_.gather(-1, ranks.long())
    if interpolation in ("linear", "midpoint"):
        weights = ranks.sub(ranks.floor()) if interpolation == "linear" else 0.5
        below = below.lerp(sorted_.gather(-1, ranks.ceil().long()), weights)
    result = below.movedim(-1, 0).reshape([qs.shape[0]] + out_shape)
    return result if R.is_tensor(q) and q.ndim else result.squeeze(0)


def _quantile_decompositions(op, op_scalar, name, ignore_nan):
    def decomposition(self, q, dim=None, keepdim=False, interpolation="linear"):
        return _quantile(name, self, q, dim, keepdim, interpolation, ignore_nan)
    register_decomposition(op)(decomposition)
    register_decomposition(op_scalar)(decomposition)


_quantile_decompositions(quantile, quantile_scalar, "quantile", False)
_quantile_decompositions(nanquantile, nanquantile_scalar, "nanquantile", True)


# --- membership -----------------------------------------------------------------------------------
_ISIN_KW = "*, bool assume_unique=False, bool invert=False) -> Tensor"
isin = defop(f"isin.Tensor_Tensor(Tensor elements, Tensor test_elements, {_ISIN_KW}")
isin_tensor_scalar = defop(f"isin.Tensor_Scalar(Tensor elements, Scalar test_element, {_ISIN_KW}")
isin_scalar_tensor = defop(f"isin.Scalar_Tensor(Scalar element, Tensor test_elements, {_ISIN_KW}")


def _isin(elements, test_elements, assume_unique=False, invert=False):
    """Each element against every test element (PyTorch's default for small test sets)."""
    from .factory import scalar_tensor
    like = elements if R.is_tensor(elements) else test_elements
    for x in (elements, test_elements):
        if (x.dtype if R.is_tensor(x) else type(x)) in (D.bool_, bool):
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    dt = R.promote(elements, test_elements)
    elements, test_elements = (
        x.to(dt) if R.is_tensor(x) else scalar_tensor(x, dtype=dt, device=like.device)
        for x in (elements, test_elements))
    tests = test_elements.reshape(-1)
    if tests.numel() < 10 * elements.numel() ** 0.145 or not tests.numel():
        found = elements.unsqueeze(-1).eq(tests).any(-1)
    else:
        # PyTorch's threshold for its sorting algorithm: here a binary search of each element
        # in the sorted test set, O(n log m) where the comparison table is n * m (65536
        # elements in 256: 15 -> ~2 ms); NaN sorts last and never equals what it finds
        from .indexing import searchsorted
        ordered = sort(tests, stable=False)[0]
        at = searchsorted(ordered, elements).clamp(None, tests.numel() - 1)
        found = ordered[at].eq(elements)
    return found.logical_not() if invert else found


for _op in (isin, isin_tensor_scalar, isin_scalar_tensor):
    register_decomposition(_op)(_isin)


# --- histograms -----------------------------------------------------------------------------------
def _histogram_checks(self, weight, density):
    if self.dtype not in (D.float32, D.float64, D.float16, D.bfloat16):
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{R.type_name(self.dtype)}'")
    if weight is not None and tuple(weight.shape) != tuple(self.shape):
        flat = f"[{self.numel()}, 1]"
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape {flat} and weight with shape "
                           f"[{', '.join(map(str, weight.shape))}]")


def _histogram_count_meta(self, bins=100, range=None, weight=None, density=False):
    _histogram_checks(self, weight, density)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None and range[0] > range[1]:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                           f"{range[0]:g} max {range[1]:g} for dimension 0")
    return TensorSpec((bins,), self.dtype), TensorSpec((bins + 1,), self.dtype)


def _histogram_edges_meta(self, bins, weight=None, density=False):
    _histogram_checks(self, weight, density)
    if bins.ndim != 1 or bins.numel() < 1:
        raise RuntimeError("torch.histogramdd: bins tensor should have one dimension and at "
                           "least 1 element")
    return TensorSpec((bins.numel() - 1,), self.dtype), TensorSpec((bins.numel(),), self.dtype)


histogram_bin_ct = defop("histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, "
                         "Tensor? weight=None, bool density=False) -> (Tensor hist, "
                         "Tensor bin_edges)", _histogram_count_meta)
histogram_bins_tensor = defop("histogram.bins_tensor(Tensor self, Tensor bins, *, "
                              "Tensor? weight=None, bool density=False) -> (Tensor hist, "
                              "Tensor bin_edges)", _histogram_edges_meta)
