"""``nn.utils``: gradient clipping, parameter vectors, RNN sequences, parametrizations
(weight/spectral norm, orthogonal), pruning, conv/linear + batch-norm fusion."""

from . import parametrizations, parametrize, prune, rnn  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import (  # noqa: F401
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights,
)
from .weight_norm import (  # noqa: F401
    remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm,
)
