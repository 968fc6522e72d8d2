"""Dropout and attention: composites over ``bernoulli``, pointwise ops, softmax and matmul.

Dropout draws its mask with ``aten::bernoulli.p`` from the default (or given) generator, so a
program seeded with ``strata.manual_seed`` drops the same elements on every run. The variants
follow ``aten/src/ATen/native/Dropout.cpp``: ``feature_*`` drops whole channels (one draw per
(N, C) pair), ``alpha_*`` keeps the mean and variance of SELU activations. ``native_dropout``
also returns the boolean mask, which its backward needs.

``scaled_dot_product_attention`` is PyTorch's math backend (``_scaled_dot_product_attention_math``
in ``aten/src/ATen/native/transformers/attention.cpp``): q and k scaled by sqrt(scale) each,
masks made additive, ``_safe_softmax`` so a fully masked row gives zeros, then dropout.
"""

import math

from ..core import dtype as D
from . import activation as A
from . import factory as F
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .op import aten, defop, register_decomposition

# --- dropout --------------------------------------------------------------------------------------

native_dropout = defop("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                       function=True)
dropout = defop("dropout(Tensor input, float p, bool train) -> Tensor", function=True)
dropout_ = defop("dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", function=True)
feature_dropout = defop("feature_dropout(Tensor input, float p, bool train) -> Tensor",
                        function=True)
feature_dropout_ = defop("feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
                         function=True)
alpha_dropout = defop("alpha_dropout(Tensor input, float p, bool train) -> Tensor", function=True)
alpha_dropout_ = defop("alpha_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
                       function=True)
feature_alpha_dropout = defop("feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor",
                              function=True)
feature_alpha_dropout_ = defop("feature_alpha_dropout_(Tensor(a!) self, float p, bool train) -> "
                               "Tensor(a!)", function=True)

_SELU_NEG_SATURATION = 1.7580993408473766  # -SELU(-inf) = alpha * scale


@register_decomposition(native_dropout)
def _native_dropout(input, p, train):
    if input.numel() == 0:
        return input, F.empty(tuple(input.shape), dtype=input.dtype, device=input.device)
    if train is None or train:
        keep = 1.0 - p
        mask = F.bernoulli(F.empty(tuple(input.shape), dtype=D.bool_, device=input.device), keep)
        return P.mul_(P.mul(input, mask), 0.0 if keep == 0 else 1.0 / keep), mask
    return F.clone(input), F.full(tuple(input.shape), True, dtype=D.bool_, device=input.device)


def _dropout_impl(input, p, train, *, feature, alpha, inplace):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train:
        return input
    if p == 1:
        return P.mul_(input, 0) if inplace else P.mul(input, 0)
    shape = tuple(input.shape)
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (input.ndim - 2)   # one draw per (sample, channel)
    noise = F.bernoulli(F.empty(shape, dtype=input.dtype, device=input.device), 1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_NEG_SATURATION ** 2 * p + 1) * (1 - p))
        # dropped elements become a * -saturation + b, kept ones a * x + b
        b = P.add(P.mul(P.sub(noise, 1), _SELU_NEG_SATURATION * a),
                  _SELU_NEG_SATURATION * a * p)
        noise = P.mul_(noise, a)
    else:
        noise = P.div_(noise, 1 - p)
    out = P.mul_(input, noise) if inplace else P.mul(input, noise)
    return P.add_(out, b) if alpha else out


def _variant(op, *, feature, alpha, inplace):
    @register_decomposition(op)
    def decomposition(input, p, train):
        return _dropout_impl(input, p, train, feature=feature, alpha=alpha, inplace=inplace)
    decomposition.__name__ = decomposition.__qualname__ = f"_{op.schema.name}"


for _op, _op_, _feature, _alpha in [
        (dropout, dropout_, False, False), (feature_dropout, feature_dropout_, True, False),
        (alpha_dropout, alpha_dropout_, False, True),
        (feature_alpha_dropout, feature_alpha_dropout_, True, True)]:
    _variant(_op, feature=_feature, alpha=_alpha, inplace=False)
    _variant(_op_, feature=_feature, alpha=_alpha, inplace=True)

# --- attention ---------------------------------------------------------------------------------

scaled_dot_product_attention = defop(
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
    "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, "
    "bool enable_gqa=False) -> Tensor")

# c10's TypeMeta names, which PyTorch's attention checks print
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def _check_sdpa_inputs(query, key, value, attn_mask):
    qd, kd, vd = query.dtype, key.dtype, value.dtype
    if not (qd is kd is vd):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_CPP_NAMES[qd.name]} key.dtype: {_CPP_NAMES[kd.name]} "
                           f"and value.dtype: {_CPP_NAMES[vd.name]} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: "
                           f"{value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype not in (D.bool_, D.float32, qd):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_CPP_NAMES[attn_mask.dtype.name]} "
                           f"and  query.dtype: {_CPP_NAMES[qd.name]} instead.")
    if qd.category != D.FLOATING:
        raise RuntimeError(f"expected scalar type Float but found {R.type_name(qd)}")


def _additive_mask(mask, dtype):
    """A bool mask (True = attend) as 0 / -inf in ``dtype``; a float mask is already additive."""
    if mask.dtype is not D.bool_:
        return mask
    additive = P.where(mask, 0.0, -math.inf)
    return additive if additive.dtype is dtype else F._to_copy(additive, dtype=dtype)


def _repeat_heads(query, key, value):
    """Grouped-query attention: each key/value head serves query.size(-3) / key.size(-3) heads."""
    q_heads, k_heads, v_heads = query.shape[-3], key.shape[-3], value.shape[-3]
    if q_heads % k_heads or q_heads % v_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in "
                           "query")
    return (S.repeat_interleave(key, q_heads // k_heads, -3),
            S.repeat_interleave(value, q_heads // v_heads, -3))


@register_decomposition(scaled_dot_product_attention)
def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    _check_sdpa_inputs(query, key, value, attn_mask)
    if attn_mask is not None:
        attn_mask = _additive_mask(attn_mask, query.dtype)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        L, S_ = query.shape[-2], key.shape[-2]
        causal = S.tril(F.full((L, S_), True, dtype=D.bool_, device=query.device))
        attn_mask = _additive_mask(causal, query.dtype)
    if enable_gqa and query.ndim >= 3:
        key, value = _repeat_heads(query, key, value)
    # Scale q and k by sqrt(scale) each (not q @ k by scale) so the product stays in range.
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    root = math.sqrt(abs(factor))
    query = P.mul(query, -root if factor < 0 else root)
    attn = aten.matmul.default(query, P.mul(S.transpose(key, -2, -1), root))
    if attn_mask is not None:
        attn = P.add(attn, attn_mask)
    attn = A._safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return aten.matmul.default(attn, value)
