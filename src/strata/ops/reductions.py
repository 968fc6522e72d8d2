"""Reductions and scans.

``dim`` accepts None (all dims), an int or a list; ``keepdim`` keeps reduced dims as size 1.
Integer and bool inputs of ``sum``/``prod``/``cumsum`` accumulate in int64 unless ``dtype=`` is
given; ``mean``/``var`` need a floating dtype (PyTorch's "could not infer output dtype" error
otherwise). Reductions without an identity (``amax``, ``max``, ``argmax``, ...) refuse an empty
reduced dim, with PyTorch's messages; ``sum`` of nothing is 0, ``prod`` 1, ``mean`` nan.

Primitives are the reductions NumPy does in one call (sum, prod, mean, var, amax/amin, max/min,
max.dim/min.dim, argmax/argmin, all/any, vector_norm) and the scans; the rest (std, aminmax,
logsumexp, nanmean, count_nonzero, diff, ...) decompose into them.
"""

import builtins
import math
import warnings

from ..core import dtype as D
from ..core.shape import wrap_dim
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .factory import scalar_tensor
from .op import TensorSpec, aten, defop, register_decomposition

_T = R.type_name


# --- shared checks -----------------------------------------------------------------------------

def _dim_list(dim):
    """The dims a caller named, in their order (None and [] name none)."""
    if dim is None:
        return ()
    return (dim,) if isinstance(dim, int) else tuple(dim)


def check_identity_free(name, self, dim):
    """``amax``-style reductions have no identity: an empty input needs a non-empty dim."""
    if self.numel() != 0:
        return
    named = _dim_list(dim)
    if not named:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    for d in named:  # PyTorch reports the dim as the caller spelled it
        if self.shape[wrap_dim(d, self.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def check_reduced_dim(name, self, d):
    """Ops reducing one (wrapped) dim ``d`` that pick an element need that dim non-empty."""
    if self.ndim and self.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def one_dim_meta(self, dim, keepdim, dtype):
    """Shape and dtype of a reduction over the single dim ``dim``; returns (spec, wrapped dim)."""
    d = wrap_dim(dim, self.ndim)
    return TensorSpec(R.reduced_shape(tuple(self.shape), (d,), keepdim), dtype), d


def mean_dtype(self, dtype):
    """mean needs a floating result dtype: the one asked for, or the input's."""
    if dtype is not None:
        if dtype.category < D.FLOATING:
            raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {_T(dtype)}")
        return dtype
    if self.dtype.category < D.FLOATING:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {_T(self.dtype)}")
    return self.dtype


def _float_input(message, self):
    if self.dtype.category < D.FLOATING:
        raise RuntimeError(message.format(_T(self.dtype)))


# --- sum, prod, mean -----------------------------------------------------------------------------

def _sum_meta(self, dim=None, keepdim=False, dtype=None):
    return R.reduction_meta(self, dim, keepdim, R.sum_dtype(self, dtype))


def _prod_meta(self, dtype=None):
    return R.reduction_meta(self, None, False, R.sum_dtype(self, dtype))


def _prod_dim_meta(self, dim, keepdim=False, dtype=None):
    return one_dim_meta(self, dim, keepdim, R.sum_dtype(self, dtype))[0]


def _mean_meta(self, dim=None, keepdim=False, dtype=None):
    return R.reduction_meta(self, dim, keepdim, mean_dtype(self, dtype))


sum = defop("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
            "ScalarType? dtype=None) -> Tensor", _sum_meta, tags=("reduction",))
prod = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", _prod_meta,
             tags=("reduction",))
prod_dim = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
                 "ScalarType? dtype=None) -> Tensor", _prod_dim_meta, tags=("reduction",))
mean = defop("mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
             "ScalarType? dtype=None) -> Tensor", _mean_meta, method=True, function=True,
             tags=("reduction",))
nansum = defop("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
               "ScalarType? dtype=None) -> Tensor", method=True, function=True)
nanmean = defop("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
                "ScalarType? dtype=None) -> Tensor", method=True, function=True)


@register_decomposition(nansum)
def _nansum(self, dim=None, keepdim=False, dtype=None):
    _no_complex(self, RuntimeError, "nansum on CPU does not support complex inputs")
    if self.dtype.category == D.FLOATING:
        self = P.where(P.isnan(self), 0, self)
    return sum(self, dim, keepdim, dtype)


@register_decomposition(nanmean)
def _nanmean(self, dim=None, keepdim=False, dtype=None):
    _float_input("nanmean(): expected input to have floating point or complex dtype but got {}",
                 self)
    count = sum(P.logical_not(P.isnan(self)), dim, keepdim, None)
    return P.div(nansum(self, dim, keepdim, dtype), count)


# --- extrema --------------------------------------------------------------------------------------

def _no_complex(self, error, message):
    if self.dtype.is_complex:
        raise error(message.format(type=R.type_name(self.dtype)))


def _extremum_meta(name):
    def meta(self, dim=(), keepdim=False):
        _no_complex(self, NotImplementedError,
                    f"\"{name[1:]}_values_cpu\" not implemented for '{{type}}'")
        dims = R.reduction_dims(self, dim)
        check_identity_free(name, self, dim)
        return TensorSpec(R.reduced_shape(tuple(self.shape), dims, keepdim), self.dtype)
    return meta


def _full_extremum_meta(name):
    def meta(self):
        _no_complex(self, NotImplementedError, f"\"{name}_all\" not implemented for '{{type}}'")
        check_identity_free(name, self, None)
        return TensorSpec((), self.dtype)
    return meta


def _extremum_dim_meta(name):
    def meta(self, dim, keepdim=False):
        _no_complex(self, RuntimeError, f"{name}(): does not support complex input")
        spec, d = one_dim_meta(self, dim, keepdim, self.dtype)
        check_reduced_dim(name, self, d)
        return spec, TensorSpec(spec.shape, D.int64)
    return meta


def _arg_meta(name):
    def meta(self, dim=None, keepdim=False):
        if self.dtype is D.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        _no_complex(self, RuntimeError, f"{name}(): does not support complex input")
        if dim is None:
            if self.numel() == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 f"input.numel() == 0.")
            return TensorSpec((1,) * self.ndim if keepdim else (), D.int64)
        spec, d = one_dim_meta(self, dim, keepdim, D.int64)
        check_reduced_dim(name, self, d)
        return spec
    return meta


amax = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
             _extremum_meta("amax"), method=True, function=True, tags=("reduction",))
amin = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
             _extremum_meta("amin"), method=True, function=True, tags=("reduction",))
# max()/min() are amax/amin over everything, but primitives of their own: x.max() is hot, and
# PyTorch names them in its errors ("max(): Expected reduction dim to be specified ...").
max = defop("max(Tensor self) -> Tensor", _full_extremum_meta("max"), tags=("reduction",))
min = defop("min(Tensor self) -> Tensor", _full_extremum_meta("min"), tags=("reduction",))
max_dim = defop("max.dim(Tensor self, int dim, bool keepdim=False) -> "
                "(Tensor values, Tensor indices)", _extremum_dim_meta("max"),
                tags=("reduction",))
min_dim = defop("min.dim(Tensor self, int dim, bool keepdim=False) -> "
                "(Tensor values, Tensor indices)", _extremum_dim_meta("min"),
                tags=("reduction",))
argmax = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               _arg_meta("argmax"), method=True, function=True, tags=("reduction",))
argmin = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               _arg_meta("argmin"), method=True, function=True, tags=("reduction",))
aminmax = defop("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> "
                "(Tensor min, Tensor max)")


@register_decomposition(aminmax)
def _aminmax(self, dim=None, keepdim=False):
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = ()
    else:
        d = wrap_dim(dim, self.ndim)
        if self.ndim and self.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,)
    return amin(self, dims, keepdim), amax(self, dims, keepdim)


# --- variance -------------------------------------------------------------------------------------

def _var_meta(self, dim=None, correction=None, keepdim=False):
    _float_input("std and var only support floating point and complex dtypes", self)
    return R.reduction_meta(self, dim, keepdim, self.dtype.to_real())


var = defop("var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
            "bool keepdim=False) -> Tensor", _var_meta, tags=("reduction",))
std = defop("std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
            "bool keepdim=False) -> Tensor")
var_mean = defop("var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                 "bool keepdim=False) -> (Tensor, Tensor)")
std_mean = defop("std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                 "bool keepdim=False) -> (Tensor, Tensor)")


@register_decomposition(std)
def _std(self, dim=None, correction=None, keepdim=False):
    return P.sqrt(var(self, dim, correction, keepdim))


@register_decomposition(var_mean)
def _var_mean(self, dim=None, correction=None, keepdim=False):
    return var(self, dim, correction, keepdim), mean(self, dim, keepdim, None)


@register_decomposition(std_mean)
def _std_mean(self, dim=None, correction=None, keepdim=False):
    return _std(self, dim, correction, keepdim), mean(self, dim, keepdim, None)


# --- logical reductions and counting -----------------------------------------------------------

def logical_dims(self, dim):
    """all/any reduce every dim for ``dim=None`` but none for an empty list (unlike sum)."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        return ()
    return R.reduction_dims(self, dim)


def _logical_meta(self, dim=None, keepdim=False):
    dims = logical_dims(self, dim)
    dtype = D.uint8 if self.dtype is D.uint8 else D.bool_  # PyTorch keeps uint8 for legacy masks
    return TensorSpec(R.reduced_shape(tuple(self.shape), dims, keepdim), dtype)


all = defop("all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
            _logical_meta, method=True, function=True, tags=("reduction",))
any = defop("any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
            _logical_meta, method=True, function=True, tags=("reduction",))
count_nonzero = defop("count_nonzero(Tensor self, int? dim=None) -> Tensor")
count_nonzero_dims = defop("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor")


@register_decomposition(count_nonzero)
def _count_nonzero(self, dim=None):
    return sum(P.ne(self, 0), dim, False, None)


@register_decomposition(count_nonzero_dims)
def _count_nonzero_dims(self, dim):
    return sum(P.ne(self, 0), dim, False, None)


# --- logsumexp and norms -----------------------------------------------------------------------

logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
                  method=True, function=True)


@register_decomposition(logsumexp)
def _logsumexp(self, dim, keepdim=False):
    """Shift by the (detached) max so exp cannot overflow; an infinite max shifts by 0."""
    if self.dtype.category != D.FLOATING:
        self = self.to(D.get_default_dtype())
    if self.numel() == 0:  # no max to shift by: the sum of nothing is 0, its log -inf
        return P.log(sum(P.exp(self), dim, keepdim, None))
    m = S.detach(amax(self, dim, True))
    m = P.where(P.isinf(m), 0, m)
    total = P.log(sum(P.exp(P.sub(self, m)), dim, keepdim, None))
    return P.add(total, m if keepdim else S.squeeze(m, R.reduction_dims(self, dim)))


def _format_ord(ord):
    if math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(int(ord)) if float(ord).is_integer() else str(ord)


def _vector_norm_meta(self, ord=2, dim=None, keepdim=False, dtype=None):
    _float_input("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                 "Got {}", self)
    if dtype is not None:
        if dtype.category != D.FLOATING:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {_T(dtype)}")
        if D.promote_types(self.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_T(self.dtype)}) "
                               f"should be convertible without narrowing to the specified dtype "
                               f"({_T(dtype)})")
    dims = R.reduction_dims(self, dim)
    if self.numel() == 0 and (ord < 0 or ord == math.inf):
        if not _dim_list(dim):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_ord(ord)} norm on "
                               f"an empty tensor because the operation does not have an identity")
        for d in dims:
            if self.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_format_ord(ord)} "
                                   f"norm on the dimension {d}because this dimension is empty "
                                   f"and the operation does not have an identity")
    out_dtype = (dtype or self.dtype).to_real()   # a complex tensor's norm is real
    return TensorSpec(R.reduced_shape(tuple(self.shape), dims, keepdim), out_dtype)


# Bound to strata.norm / Tensor.norm by frontend/reductions.py; strata.linalg exports it.
vector_norm = defop("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, "
                    "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                    _vector_norm_meta, tags=("reduction",))


# --- scans -------------------------------------------------------------------------------------

def _cumsum_meta(self, dim, dtype=None):
    wrap_dim(dim, self.ndim)
    return TensorSpec(tuple(self.shape), R.sum_dtype(self, dtype))


def _cum_extremum_meta(self, dim):
    wrap_dim(dim, self.ndim)
    shape = tuple(self.shape)
    return TensorSpec(shape, self.dtype), TensorSpec(shape, D.int64)


def _logcumsumexp_meta(self, dim):
    wrap_dim(dim, self.ndim)
    if self.dtype.category != D.FLOATING:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_T(self.dtype)}'")
    return TensorSpec(tuple(self.shape), self.dtype)


cumsum = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", _cumsum_meta,
               method=True, function=True, tags=("scan",))
cumprod = defop("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                _cumsum_meta, method=True, function=True, tags=("scan",))
cummax = defop("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
               _cum_extremum_meta, tags=("scan",))
cummin = defop("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
               _cum_extremum_meta, tags=("scan",))
logcumsumexp = defop("logcumsumexp(Tensor self, int dim) -> Tensor", _logcumsumexp_meta,
                     method=True, function=True, tags=("scan",))
diff = defop("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) "
             "-> Tensor", method=True, function=True)


@register_decomposition(diff)
def _diff(self, n=1, dim=-1, prepend=None, append=None):
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, self.ndim)
    for extra in (prepend, append):
        if extra is None:
            continue
        if extra.ndim != self.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in range(self.ndim):
            if k != d and extra.shape[k] != self.shape[k]:
                raise RuntimeError(
                    f"diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({k}) = "
                    f"{self.shape[k]}, but got tensor.size({k}) = {extra.shape[k]}")
    if n == 0:   # as ATen's diff_helper: a copy into zeros, prepend and append ignored
        from .factory import copy_, full
        return copy_(full(tuple(self.shape), 0, dtype=self.dtype, device=self.device), self)
    if prepend is not None or append is not None:
        self = S.cat([t for t in (prepend, self, append) if t is not None], d)
    rounds = n if n < self.shape[d] else self.shape[d]  # each round shortens dim by one
    if rounds == 0:   # an empty dim: ATen returns the input itself
        return self
    step = P.logical_xor if self.dtype is D.bool_ else P.sub  # bool has no subtraction
    for _ in range(rounds):
        size = self.shape[d]
        self = step(S.slice(self, d, 1, size, 1), S.slice(self, d, 0, size - 1, 1))
    return self


# --- integrals of samples: trapezoid rules (``aten/src/ATen/native/Integration.cpp``) -----------
trapezoid = defop("trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor")
trapezoid_dx = defop("trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor")
trapz = defop("trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor")
trapz_dx = defop("trapz.dx(Tensor y, *, float dx=1, int dim=-1) -> Tensor")
cumulative_trapezoid = defop("cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor")
cumulative_trapezoid_dx = defop("cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) "
                                "-> Tensor")


def _check_no_bool(name, y, x=None):
    if x is None and y.dtype is D.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if x is not None and D.bool_ in (y.dtype, x.dtype):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           f"supported")


def _spacings(y, x, dim):
    """x[i + 1] - x[i] along ``dim``, shaped to broadcast against y's intervals."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    elif x.ndim < y.ndim:
        x = x.reshape([1] * (y.ndim - x.ndim) + list(x.shape))
    return _diff(x, 1, dim)


def _sides(y, dim):
    """y[i] + y[i + 1] along ``dim``."""
    size = y.shape[dim]
    return P.add(S.slice(y, dim, 0, builtins.max(size - 1, 0), 1), S.slice(y, dim, 1, size, 1))


def _trapezoid_empty(y, dim):
    from .factory import full
    shape = list(y.shape)
    del shape[dim]
    return full(shape, 0, dtype=y.dtype, device=y.device)


@register_decomposition(trapezoid)
@register_decomposition(trapz)
def _trapezoid(y, x, dim=-1):
    dim = wrap_dim(dim, y.ndim)
    if y.shape[dim] == 0:
        return _trapezoid_empty(y, dim)
    _check_no_bool("trapezoid", y, x)
    return P.div(sum(P.mul(_spacings(y, x, dim), _sides(y, dim)), dim), 2.0)


@register_decomposition(trapezoid_dx)
@register_decomposition(trapz_dx)
def _trapezoid_dx(y, dx=1, dim=-1):
    dim = wrap_dim(dim, y.ndim)
    if y.shape[dim] == 0:
        return _trapezoid_empty(y, dim)
    _check_no_bool("trapezoid", y)
    ends = P.add(S.select(y, dim, 0), S.select(y, dim, -1))
    return P.mul(P.sub(sum(y, dim), P.mul(ends, 0.5)), dx)


@register_decomposition(cumulative_trapezoid)
def _cumulative_trapezoid(y, x, dim=-1):
    dim = wrap_dim(dim, y.ndim)
    _check_no_bool("cumulative_trapezoid", y, x)
    return cumsum(P.div(P.mul(_spacings(y, x, dim), _sides(y, dim)), 2.0), dim)


@register_decomposition(cumulative_trapezoid_dx)
def _cumulative_trapezoid_dx(y, dx=1, dim=-1):
    dim = wrap_dim(dim, y.ndim)
    _check_no_bool("cumulative_trapezoid", y)
    return cumsum(P.mul(_sides(y, dim), dx / 2.0), dim)


# --- Vandermonde matrices ----------------------------------------------------------------------
vander = defop("vander(Tensor x, int? N=None, bool increasing=False) -> Tensor", function=True)


@register_decomposition(vander)
def _vander(x, N=None, increasing=False):
    """Columns 1, x, x^2, ... as a running product (``cumprod``), so gradients flow; integer and
    bool inputs compute in int64 (``promote_types(x, Long)``)."""
    from .factory import full
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = D.promote_types(x.dtype, D.int64)
    ones = full((x.shape[0], builtins.min(n, 1)), 1, dtype=dt, device=x.device)
    if n <= 1:   # no power of x in it: not a function of x
        return ones
    powers = x.to(dt).unsqueeze(1).expand(x.shape[0], n - 1)
    result = cumprod(S.cat([ones, powers], 1), 1)
    return result if increasing else S.flip(result, [1])


# --- covariance (ATen's Correlation.cpp) ----------------------------------------------------------
cov = defop("cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) "
            "-> Tensor", method=True, function=True)
corrcoef = defop("corrcoef(Tensor self) -> Tensor", method=True, function=True)


def _check_weights(name, w, observations, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    kind_ok = w.dtype.category == D.INTEGRAL if integral else w.dtype.category == D.FLOATING
    if not kind_ok:
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{_T(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    if observations and P.lt(min(w), 0).item():
        raise RuntimeError(f"cov(): {name} cannot be negative")


@register_decomposition(cov)
def _cov(self, correction=1, fweights=None, aweights=None):
    """Rows are variables, columns observations; ``fweights`` (counts) and ``aweights``
    (importance) weight the observations."""
    if self.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {self.ndim} dimensions")
    if self.dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = S.view(self, (1, -1)) if self.ndim < 2 else self
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, integral=False)
        w = aweights if w is None else P.mul(w, aweights)
    w_sum = sum(w) if w is not None else \
        scalar_tensor(observations, dtype=D.int64, device=self.device)
    if w is not None and not P.ne(w_sum, 0).item():
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = P.div(sum(P.mul(x, w) if w is not None else x, [1]), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm = P.sub(w_sum, P.div(P.mul(sum(P.mul(w, aweights)), correction), w_sum))
    else:
        norm = P.sub(w_sum, correction)
    if P.le(norm, 0).item():
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.")
        norm = P.mul(norm, 0)
    centred = P.sub(x, S.unsqueeze(avg, 1))
    weighted = P.mul(centred, w) if w is not None else centred
    return S.squeeze(P.div(aten.mm.default(centred, S.t(weighted)), norm))


@register_decomposition(corrcoef)
def _corrcoef(self):
    if self.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {self.ndim} dimensions")
    c = cov(self)
    if c.ndim == 0:   # one variable: nan for a zero/inf/nan variance, 1 otherwise
        return P.div(c, c)
    stddev = P.sqrt(S.diagonal(c))
    c = P.div(P.div(c, S.view(stddev, (-1, 1))), S.view(stddev, (1, -1)))
    return P.clamp(c, -1, 1)
