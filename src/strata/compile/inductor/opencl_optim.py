"""The OpenCL device's fused optimizer updates: Adam's (and AdamW's) and SGD-with-momentum's
step of one parameter (or flat bucket) as one kernel, where the op path launches about ten.

The same hook and the same arithmetic as the CPU's generated C (eager_optim.py, reached through
optim/_native_update.py): each operation in the op path's order, each result rounded to the
dtype, no contraction into FMAs (``FP_CONTRACT OFF``). Written by hand like the GEMM: it is one
line per op of the update. The tensors must be contiguous opencl tensors of one floating dtype
and size; ``False`` sends the caller back to its ops.
"""

from ...core import dtype as D
from .oclprinter import CL_TYPES, FP64
from .opencl_pointwise import is_device, launch, runtime_of

_ADAM = """#pragma OPENCL FP_CONTRACT OFF
__kernel void KERNEL(__global T* restrict param, const long param_off,
                     __global const T* restrict grad, const long grad_off,
                     __global T* restrict exp_avg, const long exp_avg_off,
                     __global T* restrict exp_avg_sq, const long exp_avg_sq_off,
                     const T weight, const T beta2, const T one_minus_beta2,
                     const T bias_correction2_sqrt, const T eps, const T step DECAY_PARAM) {
    const long i = get_global_id(0);
    const T p = param[param_off + i] DECAY;
    const T g = grad[grad_off + i];
    const T m0 = exp_avg[exp_avg_off + i];
    const T m = m0 + (g - m0) * weight;                                        /* lerp_ */
    const T v = exp_avg_sq[exp_avg_sq_off + i] * beta2 + (g * one_minus_beta2) * g;
    const T denom = sqrt(v) / bias_correction2_sqrt + eps;
    param[param_off + i] = p + (m * step) / denom;                            /* addcdiv_ */
    exp_avg[exp_avg_off + i] = m;
    exp_avg_sq[exp_avg_sq_off + i] = v;
}
"""
_SGD = """#pragma OPENCL FP_CONTRACT OFF
__kernel void k_sgd_momentum_step(__global T* restrict param, const long param_off,
                                  __global const T* restrict grad, const long grad_off,
                                  __global T* restrict buf, const long buf_off,
                                  const T momentum, const T one_minus_dampening, const T step,
                                  const long nesterov) {
    const long i = get_global_id(0);
    const T g = grad[grad_off + i];
    const T b = buf[buf_off + i] * momentum + g * one_minus_dampening;       /* mul_, add_ */
    const T direction = nesterov ? g + b * momentum : b;
    param[param_off + i] = param[param_off + i] + direction * step;          /* add_ */
    buf[buf_off + i] = b;
}
"""
# AdamW: the decoupled decay's ``param.mul_(decay)`` folded in, rounded as the op rounds it
_ADAMW = _ADAM.replace("KERNEL", "k_adamw_step").replace(" DECAY_PARAM", ", const T decay") \
    .replace(" DECAY;", " * decay;                    /* mul_ */")
_ADAM = _ADAM.replace("KERNEL", "k_adam_step").replace(" DECAY_PARAM", "").replace(" DECAY;", ";")
_TENSORS = {"adam_step": ("param", "grad", "exp_avg", "exp_avg_sq"),
            "adamw_step": ("param", "grad", "exp_avg", "exp_avg_sq"),
            "sgd_momentum_step": ("param", "grad", "buf")}
_ADAM_SCALARS = ("weight", "beta2", "one_minus_beta2", "bias_correction2_sqrt", "eps", "step")
_SCALARS = {"adam_step": _ADAM_SCALARS, "adamw_step": (*_ADAM_SCALARS, "decay"),
            "sgd_momentum_step": ("momentum", "one_minus_dampening", "step")}
_SOURCES = {"adam_step": _ADAM, "adamw_step": _ADAMW, "sgd_momentum_step": _SGD}
_FLAGS = {"adam_step": (), "adamw_step": (), "sgd_momentum_step": ("nesterov",)}


def _fits(tensors):
    first = tensors[0]
    if first.dtype not in (D.float32, D.float64):
        return False
    return all(is_device(t) and t.device == first.device and t.dtype == first.dtype and
               t.numel() == first.numel() and t.is_contiguous() for t in tensors)


def _names(update):
    names = []
    for name in _TENSORS[update]:
        names += (name, f"{name}_off")
    return [*names, *_SCALARS[update], *_FLAGS[update]]


_NAMES = {update: _names(update) for update in _TENSORS}


def _build(update, dtype):
    def build():
        ctype = CL_TYPES[dtype.name]
        source = f"#define T {ctype}\n" + _SOURCES[update]
        return (FP64 + source if ctype == "double" else source), _NAMES[update]
    return build


def fused_update(update):
    """The hook of optim/_native_update.py for ``update`` ("adam_step", "adamw_step" or
    "sgd_momentum_step"): ``fn(tensors, scalars, *flags) -> bool``, the scalars in the order of
    eager_optim.py's C kernels."""
    def run(tensors, scalars, *flags):
        if not _fits(tensors):
            return False
        first = tensors[0]
        rt = runtime_of(first)
        values = []
        for t in tensors:
            values += rt.buffer_of(t)
        values += [first.dtype.np.type(v) for v in scalars]
        values += flags
        launch(update, (update, first.dtype.name), _build(update, first.dtype), values,
               list(tensors), first.numel(), rt, names=lambda: _NAMES[update])
        return True
    return run
