"""strata: a PyTorch-compatible deep-learning framework whose every layer is real and visible.

    import strata as torch
    x = torch.ones(2, 3)
    y = x + 1

This module only re-exports; each name lives in the layer that owns it (see DESIGN.md).
"""

import builtins as _builtins
import gc as _gc
import math as _math

from . import config  # noqa: F401
from .core.dtype import (  # noqa: F401
    bfloat16, can_cast, complex64, complex128, dtype, finfo, float16, float32, float64,
    get_default_dtype, iinfo, int8, int16, int32, int64, promote_types, result_type,
    set_default_dtype, uint8,
)
from .core.dtype import bool_ as bool  # noqa: A001
from .core.device import device, get_default_device, set_default_device  # noqa: F401
from .core.shape import Size  # noqa: F401
from . import ops as _ops_pkg  # noqa: F401
from .ops.op import ops  # noqa: F401
from . import dispatch  # noqa: F401
from . import library  # noqa: F401
from ._tensor import (  # noqa: F401
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
    IntTensor, LongTensor, ShortTensor, Tensor,
)
from .creation import *  # noqa: F401,F403
from .creation import range_ as range  # noqa: A001,F401
from .random import (  # noqa: F401
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from . import autograd as _autograd
from . import autograd  # noqa: F401
from .autograd.grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from . import backends as _backends
from . import _tensor
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from . import serialization  # noqa: F401
from .serialization import load, save  # noqa: F401
from . import fft, linalg  # noqa: F401
from .tensor_str import get_printoptions, printoptions, set_printoptions  # noqa: F401
from . import utils  # noqa: F401
from . import accelerator, amp, cuda, distributed, distributions, jit, onnx, sparse  # noqa: F401
from . import func  # noqa: F401
from . import multiprocessing  # noqa: F401
from . import special, testing  # noqa: F401
from .func import vmap  # noqa: F401
from . import sim  # noqa: F401
from .compile.inductor import eager as _generated_eager_kernels  # noqa: F401  (registers them)
from .compile.inductor import opencl_kernels as _opencl_kernels  # noqa: F401  (registers them)
from . import opencl  # noqa: F401
from . import profiler  # noqa: F401
from .profiler import explain  # noqa: F401
from .runtime import OutOfMemoryError  # noqa: F401
from .amp import autocast_mode as _autocast_mode
from .amp import autocast  # noqa: F401
from .amp.autocast_mode import get_autocast_dtype, is_autocast_enabled  # noqa: F401
from .sparse import sparse_coo_tensor, spmm  # noqa: F401
from .nn.functional import (  # noqa: F401  (torch.conv2d is F.conv2d)
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
)
from .functions import generated_functions as _generated_functions

inf, nan, pi, e, newaxis = _math.inf, _math.nan, _math.pi, _math.e, None
half, float, double = float16, float32, float64  # noqa: A001
cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64  # noqa: A001
from .core.formats import (  # noqa: E402,F401
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    sparse_coo,
    strided,
)

_backends.register_all()
_autograd.register()
_autocast_mode.register()
_tensor.bind_methods()
from .frontend import functions as _frontend_functions  # noqa: E402

globals().update(_frontend_functions())
globals().update(_generated_functions(globals()))


from .compile import compile  # noqa: E402,F811  (the function shadows the package, as torch's)
from . import _dynamo, compiler  # noqa: E402,F401
from . import _higher_order_ops  # noqa: E402,F401
from ._higher_order_ops import cond  # noqa: E402,F401


from .backends.cpu.threads import (  # noqa: E402
    get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads)


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted for compatibility; strata's float32 matmul is always full precision."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision}")
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


_deterministic = [False, False]   # (mode, warn_only)


# Note [Shadowed builtins]: this namespace rebinds ``bool``, ``int``, ``float``, ``max``,
# ``sum``... to dtypes and ops, as PyTorch's does, so functions here reach Python's through
# ``_builtins`` (tests/test_surface_bugs.py checks that none loads a shadowed name).
def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """strata's CPU kernels are deterministic; the flag is recorded for programs that read it."""
    for position, (name, value) in enumerate((("mode", mode), ("warn_only", warn_only)), 1):
        if not isinstance(value, _builtins.bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}' (position "
                            f"{position}) must be bool, not {type(value).__name__}")
    _deterministic[:] = [mode, warn_only]


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic[1]


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()


def numel(input) -> int:
    return input.numel()


from . import version  # noqa: F401  (strata's own build facts; the alias has PyTorch's)
from .autograd.derivatives import watch_cpu_lane_kernels

watch_cpu_lane_kernels()   # the kernels in place now are the ones the CPU backward lanes stand for
from .version import __version__

# Note [Frozen import objects]: the ~60,000 objects ``import strata`` leaves alive (modules, op
# objects, dispatch tables, kernels) never become garbage, yet every full collection walks them.
# A training step's autograd graph lives long enough to reach the oldest generation, so a small
# model's loop triggers full collections often (a 200-step RL episode: one every ~3 episodes at
# 40 ms each, 7 ms once frozen). ``gc.freeze()`` moves everything alive now to the permanent
# generation; collecting the young generations first (0.3 ms; a full collection would cost
# 20-70 ms of import time) leaves no garbage to freeze (tests/test_eager_overhead.py).
# STRATA_GC_FREEZE=0 turns it off (config.py).
if config.gc_freeze_at_import:
    _gc.collect(1)
    _gc.freeze()
