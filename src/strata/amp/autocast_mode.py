"""``autocast``: run matmul-like ops in lower precision, through the dispatcher's Autocast key.

Entering ``autocast("cpu")`` adds ``AutocastCPU`` to the thread-local include set. The key sits
above Autograd, so its kernels see every op first and redispatch below the key (so autograd
records the casts), with PyTorch's three CPU cast policies (aten/src/ATen/autocast_mode.cpp):
"lower precision" ops (matmuls, convolutions, linear, attention) cast floating inputs to the
autocast dtype; "fp32" ops (losses, prod, cdist, linalg, fft, ...) cast them to float32;
"promote" ops (cat, stack, index_copy) cast them to the widest floating input type. Every other op
falls through. There is no CUDA here: ``autocast("cuda")`` warns and disables itself, as PyTorch
does without CUDA.
"""

import warnings

from ..core import dtype as D
from ..dispatch import dispatcher
from ..dispatch.dispatcher import FALLTHROUGH, register_fallback, register_kernel
from ..dispatch.keys import DispatchKey, functionality_bit
from ..dispatch.tls import state
from ..ops.op import REGISTRY

# PyTorch's CPU autocast "lower_precision_fp" ops that strata has (aten/src/ATen/autocast_mode.cpp)
LOWER_PRECISION_OPS = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::addbmm",
                       "aten::matmul", "aten::linear", "aten::convolution", "aten::conv1d",
                       "aten::conv2d", "aten::conv_transpose1d", "aten::conv_transpose2d",
                       "aten::prelu", "aten::scaled_dot_product_attention",
                       # strata's whole-layer LSTM stands where PyTorch's CPU LSTM calls
                       # mkldnn_rnn_layer, which is on this list: input, states, weights cast
                       "aten::_lstm_layer")
# PyTorch's CPU autocast "fp32" ops that strata has: inputs run in float32 whatever the dtype
FP32_OPS = ("aten::avg_pool3d", "aten::binary_cross_entropy", "aten::polar", "aten::prod",
            "aten::quantile", "aten::nanquantile", "aten::stft", "aten::cdist",
            "aten::grid_sampler_2d", "aten::grid_sampler_3d", "aten::trace",
            "aten::view_as_complex", "aten::cholesky", "aten::cholesky_solve", "aten::orgqr",
            "aten::max_pool3d", "aten::max_unpool2d", "aten::max_unpool3d",
            "aten::adaptive_avg_pool3d", "aten::reflection_pad1d", "aten::reflection_pad2d",
            "aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d",
            "aten::mse_loss", "aten::cosine_embedding_loss", "aten::nll_loss",
            "aten::hinge_embedding_loss", "aten::poisson_nll_loss", "aten::smooth_l1_loss",
            "aten::cross_entropy_loss", "aten::l1_loss", "aten::huber_loss",
            "aten::margin_ranking_loss", "aten::soft_margin_loss", "aten::triplet_margin_loss",
            "aten::multi_margin_loss",
            "aten::ctc_loss", "aten::kl_div", "aten::binary_cross_entropy_with_logits",
            "aten::fft_fft", "aten::fft_ifft", "aten::fft_fft2", "aten::fft_ifft2",
            "aten::fft_fftn", "aten::fft_ifftn", "aten::fft_rfft", "aten::fft_irfft",
            "aten::fft_rfft2", "aten::fft_irfft2", "aten::fft_rfftn", "aten::fft_irfftn",
            "aten::fft_hfft", "aten::fft_ihfft", "aten::linalg_matrix_rank", "aten::linalg_solve",
            "aten::linalg_cholesky", "aten::linalg_svdvals", "aten::linalg_eigvals",
            "aten::linalg_inv", "aten::linalg_householder_product", "aten::geqrf", "aten::svd",
            "aten::adaptive_max_pool3d", "aten::linalg_qr", "aten::linalg_svd",
            "aten::linalg_eig", "aten::linalg_eigh", "aten::linalg_lstsq",
            # PyTorch's nll_loss_nd reaches its fp32 nll_loss/nll_loss2d; strata's decomposes
            # straight to nll_loss_forward, so it takes the policy itself
            "aten::nll_loss_nd")
# ... and its "promote" ops: floating inputs are cast to the widest of their types
PROMOTE_OPS = ("aten::stack", "aten::cat", "aten::index_copy")
_AUTOCAST_BIT = functionality_bit("AutocastCPU")
_dtype = [D.bfloat16]


def is_autocast_available(device_type: str) -> bool:
    return device_type == "cpu"


def _cast(x, dtype):
    if hasattr(x, "_keyset") and x.is_floating_point() and x.dtype is not D.float64:
        return x.to(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(a, dtype) for a in x)
    return x


def _lower_precision_kernel(op, ks, args):
    return dispatcher.redispatch(op, ks, tuple(_cast(a, _dtype[-1]) for a in args))


def _fp32_kernel(op, ks, args):
    return dispatcher.redispatch(op, ks, tuple(_cast(a, D.float32) for a in args))


def _widest_type(current, arg):
    """PyTorch's ``prioritize``: float32 wins over the autocast dtype; float64 is left alone."""
    if isinstance(arg, (list, tuple)):
        for a in arg:
            current = _widest_type(current, a)
        return current
    if not (hasattr(arg, "_keyset") and arg.is_floating_point()) or arg.dtype is D.float64:
        return current
    if D.float32 in (current, arg.dtype):
        return D.float32
    if current is arg.dtype:
        return current
    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")


def _promote_kernel(op, ks, args):
    widest = _dtype[-1]
    for a in args:
        widest = _widest_type(widest, a)
    return dispatcher.redispatch(op, ks, tuple(_cast(a, widest) for a in args))


def register():
    register_fallback(DispatchKey.AutocastCPU, FALLTHROUGH)
    policies = {**dict.fromkeys(LOWER_PRECISION_OPS, _lower_precision_kernel),
                **dict.fromkeys(FP32_OPS, _fp32_kernel),
                **dict.fromkeys(PROMOTE_OPS, _promote_kernel)}
    for op in REGISTRY.values():
        kernel = policies.get(f"{op.namespace}::{op.schema.name}")
        if kernel is not None:
            register_kernel(op, DispatchKey.AutocastCPU, kernel, boxed=True)


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether ops on ``device_type`` autocast now (only ``"cpu"`` ever does here)."""
    return device_type == "cpu" and bool(state().include & _AUTOCAST_BIT)


def get_autocast_dtype(device_type: str):
    """The dtype ``autocast(device_type)`` casts to: the innermost enabled one, else the default."""
    if device_type == "cpu":
        return _dtype[-1]
    return D.float16


class autocast:
    """``with strata.autocast("cpu", dtype=strata.bfloat16): y = model(x)``."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device_type = device_type
        self.fast_dtype = dtype or (D.bfloat16 if device_type == "cpu" else D.float16)
        self._enabled = enabled
        if device_type != "cpu" and enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast."
                          if device_type == "cuda" else
                          f"User provided device_type of '{device_type}', but {device_type} is "
                          "not available in strata. Disabling autocast.")
            self._enabled = False
        if device_type == "cpu" and enabled and self.fast_dtype not in (D.bfloat16, D.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtype of torch.bfloat16, "
                          "torch.float16 currently.")
            self._enabled = False

    def __enter__(self):
        s = state()
        self._prev = s.include & _AUTOCAST_BIT
        if self._enabled:
            _dtype.append(self.fast_dtype)
            s.include |= _AUTOCAST_BIT
        else:
            s.include &= ~_AUTOCAST_BIT
        return self

    def __exit__(self, *exc):
        s = state()
        if self._enabled:
            _dtype.pop()
        s.include = (s.include & ~_AUTOCAST_BIT) | self._prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return wrapper
