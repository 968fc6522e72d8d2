"""``autocast``: run matmul-like ops in lower precision, through the dispatcher's Autocast key.

Entering ``autocast("cpu")`` adds ``AutocastCPU`` to the thread-local include set. The key sits
above Autograd, so its kernels see every op first: ops on PyTorch's CPU "lower precision" list
(matmuls, convolutions, linear, attention) cast their floating inputs to the autocast dtype and
redispatch below the key, so autograd records the casts. Every other op falls through. There is
no CUDA here: ``autocast("cuda")`` warns and disables itself, as PyTorch does without CUDA.
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
                       "aten::prelu", "aten::scaled_dot_product_attention")
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


def register():
    register_fallback(DispatchKey.AutocastCPU, FALLTHROUGH)
    for name in LOWER_PRECISION_OPS:
        for op in REGISTRY.values():
            if f"{op.namespace}::{op.schema.name}" == name:
                register_kernel(op, DispatchKey.AutocastCPU, _lower_precision_kernel, boxed=True)


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
