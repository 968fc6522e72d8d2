"""Activation modules (``torch/nn/modules/activation.py``): thin wrappers over ``nn.functional``,
and ``MultiheadAttention`` (the maths of ``F.multi_head_attention_forward``), which PyTorch keeps
here too.
"""

import math

from ... import creation
from ...core import dtype as D
from ...ops.shape import cat
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module


def _simple(name, fn_name, doc):
    """A module whose forward is ``F.<fn_name>(input)`` with no state."""
    def forward(self, input):
        return getattr(F, fn_name)(input)
    return type(name, (Module,), {"forward": forward, "__doc__": doc,
                                  "__init__": lambda self: Module.__init__(self)})


Sigmoid = _simple("Sigmoid", "sigmoid", "Applies the sigmoid function elementwise.")
Tanh = _simple("Tanh", "tanh", "Applies tanh elementwise.")
SiLU = _simple("SiLU", "silu", "Applies x * sigmoid(x) elementwise.")
Mish = _simple("Mish", "mish", "Applies x * tanh(softplus(x)) elementwise.")
Softsign = _simple("Softsign", "softsign", "Applies x / (1 + |x|) elementwise.")
Tanhshrink = _simple("Tanhshrink", "tanhshrink", "Applies x - tanh(x) elementwise.")
LogSigmoid = _simple("LogSigmoid", "logsigmoid", "Applies log(sigmoid(x)) elementwise.")
Hardsigmoid = _simple("Hardsigmoid", "hardsigmoid", "Applies the hard sigmoid elementwise.")
Hardswish = _simple("Hardswish", "hardswish", "Applies the hard swish elementwise.")
for _cls in (Sigmoid, Tanh, SiLU, Mish, Softsign, Tanhshrink, LogSigmoid, Hardsigmoid, Hardswish):
    _cls.__module__ = __name__


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU6(ReLU):
    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) in training and is
    (lower + upper) / 2 in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}"


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(creation.empty(num_parameters, device=device, dtype=dtype))
        nn_init_constant_(self.weight, init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


nn_init_constant_ = init.constant_


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return getattr(F, self._fn)(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    _fn = "softmax"


class LogSoftmax(_SoftmaxBase):
    _fn = "log_softmax"


class Softmin(_SoftmaxBase):
    _fn = "softmin"


class Softmax2d(Module):
    """Softmax over the channels at every spatial position of a (N, C, H, W) or (C, H, W)."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3, _stacklevel=5)


def _canonical_mask(mask, dtype):
    """Bool masks (True = masked out) become additive float masks with -inf."""
    if mask is None:
        return None
    if mask.dtype is D.bool_:
        return creation.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError("only bool and floating types of masks are supported")
    return mask


def _keeping_identity(fn, query, key, value):
    """``fn`` of each, one call per distinct tensor: ``query is key is value`` stays true, so the
    packed projection still applies (as PyTorch's MultiheadAttention.forward keeps it)."""
    q = fn(query)
    k = q if key is query else fn(key)
    v = q if value is query else k if value is key else fn(value)
    return q, k, v


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of size ``embed_dim // num_heads``."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(creation.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(creation.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(creation.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(creation.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(creation.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _project(self, query, key, value):
        """q, k, v projections. As PyTorch's ``_in_projection_packed``: self-attention (query is
        key is value) runs one linear with the whole ``in_proj_weight`` and takes q, k, v as
        chunks of its output (one GEMM forward and one per gradient, and the chunks' gradients
        join with one cat); encoder-decoder attention (key is value) packs k and v the same way."""
        E = self.embed_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        if not self._qkv_same_embed_dim:
            bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
            return (F.linear(query, self.q_proj_weight, bq), F.linear(key, self.k_proj_weight, bk),
                    F.linear(value, self.v_proj_weight, bv))
        if key is value:
            if query is key:
                return F.linear(query, w, b).chunk(3, -1)
            w_q, w_kv = w.split([E, 2 * E])
            b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
            return (F.linear(query, w_q, b_q),) + F.linear(key, w_kv, b_kv).chunk(2, -1)
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
        wq, wk, wv = w.chunk(3)
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = _keeping_identity(lambda x: x.transpose(0, 1), query, key, value)
        if not batched:
            query, key, value = _keeping_identity(lambda x: x.unsqueeze(1), query, key, value)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        tgt_len, bsz, embed_dim = query.shape
        if embed_dim != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {embed_dim}")
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        H, hd = self.num_heads, self.head_dim
        q, k, v = self._project(query, key, value)
        attn_mask = _canonical_mask(attn_mask, q.dtype)
        key_padding_mask = _canonical_mask(key_padding_mask, q.dtype)
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                    raise RuntimeError(f"The shape of the 2D attn_mask is "
                                       f"{_size(attn_mask.shape)}, but should be "
                                       f"{(tgt_len, key.shape[0])}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif tuple(attn_mask.shape) != (bsz * H, tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, "
                                   f"but should be {(bsz * H, tgt_len, key.shape[0])}.")
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, bsz, embed_dim)], 0)
            v = cat([v, self.bias_v.expand(1, bsz, embed_dim)], 0)
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, 1))
        q = q.reshape(tgt_len, bsz * H, hd).transpose(0, 1)
        k = k.reshape(k.shape[0], bsz * H, hd).transpose(0, 1)
        v = v.reshape(v.shape[0], bsz * H, hd).transpose(0, 1)
        if self.add_zero_attn:
            zeros = creation.zeros((bsz * H, 1, hd), dtype=k.dtype, device=k.device)
            k, v = cat([k, zeros], 1), cat([v, zeros], 1)
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, 1))
        src_len = k.shape[1]
        if key_padding_mask is not None:
            kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, H, -1, -1) \
                .reshape(bsz * H, 1, src_len)
            attn_mask = kpm if attn_mask is None else attn_mask + kpm
        dropout_p = self.dropout if self.training else 0.0
        q_scaled = q * (1.0 / math.sqrt(hd))
        scores = q_scaled @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = weights @ v                                        # (bsz*H, tgt, hd)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = self.out_proj(out).view(tgt_len, bsz, embed_dim)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        weights = weights.view(bsz, H, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights


def _size(shape):
    return tuple(shape)
