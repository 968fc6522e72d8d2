"""``nn.functional``: activations, softmax, dropout and one_hot.

Each function has ``torch.nn.functional``'s signature and calls the aten op; ``inplace=True``
picks the op's in-place twin. Checks PyTorch makes in Python (``min_val > max_val``, dropout's
``p``) are made here, with the same exception types.
"""

import warnings

from ...ops import activation as A
from ...ops import dropout as DR
from ...ops import factory as FA
from ...ops import pointwise as P
from ...ops import shape as S

__all__ = [
    "relu", "relu_", "relu6", "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu",
    "leaky_relu_", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "mish", "softplus",
    "softsign", "tanhshrink", "softshrink", "hardshrink", "logsigmoid", "threshold", "threshold_",
    "glu", "prelu", "rrelu", "rrelu_", "gelu", "silu", "sigmoid", "tanh", "softmax", "softmin",
    "log_softmax", "gumbel_softmax", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout", "one_hot",
]


def relu(input, inplace=False):
    return P.relu_(input) if inplace else P.relu(input)


def relu_(input):
    return P.relu_(input)


def relu6(input, inplace=False):
    return A.hardtanh_(input, 0, 6) if inplace else A.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return A.elu_(input, alpha) if inplace else A.elu(input, alpha)


def elu_(input, alpha=1.0):
    return A.elu_(input, alpha)


def selu(input, inplace=False):
    return A.selu_(input) if inplace else A.selu(input)


def selu_(input):
    return A.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    return A.celu_(input, alpha) if inplace else A.celu(input, alpha)


def celu_(input, alpha=1.0):
    return A.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return A.leaky_relu_(input, negative_slope) if inplace else A.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return A.leaky_relu_(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return A.hardtanh_(input, min_val, max_val) if inplace else A.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return A.hardtanh_(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    return A.hardsigmoid_(input) if inplace else A.hardsigmoid(input)


def hardswish(input, inplace=False):
    return A.hardswish_(input) if inplace else A.hardswish(input)


def mish(input, inplace=False):
    return A.mish_(input) if inplace else A.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    return A.softplus(input, beta, threshold)


def softsign(input):
    return P.div(input, P.add(P.abs(input), 1))


def tanhshrink(input):
    return P.sub(input, P.tanh(input))


def softshrink(input, lambd=0.5):
    return A.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    return A.hardshrink(input, lambd)


def logsigmoid(input):
    return A.log_sigmoid(input)


def threshold(input, threshold, value, inplace=False):
    return A.threshold_(input, threshold, value) if inplace else A.threshold(input, threshold,
                                                                             value)


def threshold_(input, threshold, value):
    return A.threshold_(input, threshold, value)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return A.glu(input, dim)


def prelu(input, weight):
    return A.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    op = A.rrelu_ if inplace else A.rrelu
    return op(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return A.rrelu_(input, lower, upper, training)


def gelu(input, approximate="none"):
    return P.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return P.mul_(input, P.sigmoid(input)) if inplace else P.silu(input)


def sigmoid(input):
    return P.sigmoid(input)


def tanh(input):
    return P.tanh(input)


# --- softmax --------------------------------------------------------------------------------------

def _softmax_dim(name, ndim, stacklevel):
    """The dim PyTorch picks when none is given (deprecated, so it warns)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return A.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return A.softmax(P.neg(input), dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return A.log_softmax(input, dim, dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    Gumbel(0, 1) noise ``g``. ``hard=True`` returns the one-hot argmax forward and the soft
    sample's gradient backward (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # g = -log(E) with E = -log(1 - U) ~ Exp(1): PyTorch draws E with exponential_ (no op here).
    uniform = FA.uniform_(FA.empty(tuple(logits.shape), dtype=logits.dtype,
                                   device=logits.device))
    gumbels = P.neg(P.log(P.neg(P.log1p(P.neg(uniform)))))
    y_soft = A.softmax(P.div(P.add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = FA.full(tuple(logits.shape), 0, dtype=logits.dtype, device=logits.device)
    y_hard = y_hard.scatter_(dim, index, 1.0)
    return P.add(P.sub(y_hard, y_soft.detach()), y_soft)


# --- dropout --------------------------------------------------------------------------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return DR.dropout_(input, p, training) if inplace else DR.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return (DR.alpha_dropout_(input, p, training) if inplace
            else DR.alpha_dropout(input, p, training))


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return (DR.feature_alpha_dropout_(input, p, training) if inplace
            else DR.feature_alpha_dropout(input, p, training))


def _channel_dropout(input, p, training, inplace, batched):
    """Zero whole channels; an unbatched input gets a batch dim of 1 for the call."""
    if not batched:
        input = S.unsqueeze(input, 0)
    out = (DR.feature_dropout_(input, p, training) if inplace
           else DR.feature_dropout(input, p, training))
    return out if batched else S.squeeze(out, [0])


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _channel_dropout(input, p, training, inplace, batched=ndim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _channel_dropout(input, p, training, inplace, batched=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, batched=ndim == 5)


# --- utilities ------------------------------------------------------------------------------------

def one_hot(tensor, num_classes=-1):
    return A.one_hot(tensor, num_classes)

