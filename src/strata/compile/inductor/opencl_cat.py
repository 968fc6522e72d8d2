"""The OpenCL device's ``cat``: up to ``FUSED_INPUTS`` inputs in one launch, more as one strided
copy each.

One launch for a few inputs is what a training step needs: the backward of ``split`` (the
attention's q, k, v) concatenates three gradients, three launches before. Each work-item writes
one output element: along ``dim`` it finds which input holds it (``x < c1`` picks input 0, ...),
and reads that input at its position there. Every input's position is clamped into its own
range, so the loads of the inputs it does not pick stay inside their buffers; a work-item loads
one element of each input, so more inputs take a copy each instead.
"""

from ...ops import shape as SH
from .ir import InputBuffer, Kernel, Pointwise, ops
from .oclprinter import print_kernel
from .opencl_pointwise import (
    identity,
    is_device,
    kernel_name,
    launch,
    new_output,
    pointwise,
    runtime_of,
    tensor_names,
    tensor_values,
)

FUSED_INPUTS = 4


def cat(tensors, dim=0):
    spec = SH.cat.meta(tensors, dim)
    devices = [t for t in tensors if is_device(t)]
    out = new_output(spec, devices[0])
    if out.ndim == 0 or not out.numel():
        return out
    dim = dim % out.ndim
    # legacy: 1-d empty tensors are skipped; so are empty inputs (nothing to copy)
    parts = [t for t in tensors if not (t.ndim == 1 and t._shape[0] == 0 and out.ndim > 1)]
    for t in parts:
        if not is_device(t):
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {out.device} and {t.device}!")
    parts = [t for t in parts if t._shape[dim]]
    if 1 < len(parts) <= FUSED_INPUTS:
        return _fused(parts, dim, out)
    at = 0
    for t in parts:
        n = t._shape[dim]
        pointwise("aten::cat", identity, [(t, out.dtype)], out.narrow(dim, at, n))
        at += n
    return out


def _fused(parts, dim, out):
    """``out`` from ``parts`` (2 to ``FUSED_INPUTS`` device tensors, none empty along ``dim``)
    in one launch (the module docstring)."""
    rt = runtime_of(out)
    rank, count = out.ndim, len(parts)
    sizes = [t._shape[dim] for t in parts]
    starts = [sum(sizes[:k]) for k in range(count)]
    values = [*starts[1:], *sizes]
    for t in parts:
        values += tensor_values(rt, t)
    values += [*tensor_values(rt, out), *out._shape]

    def names():
        listed = [*(f"c{k}" for k in range(1, count)), *(f"n{k}" for k in range(count))]
        for k in range(count):
            listed += tensor_names(f"in{k}", rank)
        return listed + [*tensor_names("out0", rank), *(f"s{d}" for d in range(rank))]
    dtypes = tuple(t.dtype.name for t in parts)
    key = ("aten::cat", rank, dim, dtypes, out.dtype.name)

    def build():
        bounds = [InputBuffer(f"c{k}", "int64", (), ()) for k in range(1, count)]
        bounds += [InputBuffer(f"n{k}", "int64", (), ()) for k in range(count)]
        inputs = [InputBuffer(f"in{k}", dtypes[k], (None,) * rank,
                              tuple(f"in{k}_st{d}" for d in range(rank)), f"in{k}_off")
                  for k in range(count)]

        def inner(index):
            x = index[dim]
            picked = None
            for k in reversed(range(count)):
                start = f"c{k}" if k else "0"
                at = f"clamp((long)({x}) - {start}, 0L, n{k} - 1)"
                value = inputs[k].load((*index[:dim], at, *index[dim + 1:]))
                if dtypes[k] != out.dtype.name:
                    value = ops.to_dtype(value, out.dtype.name)
                picked = value if picked is None else ops.where(
                    ops.lt(ops.index_expr(x, "int64"), ops.load(f"c{k + 1}", "0")),
                    value, picked)
            return picked
        ranges = tuple(f"s{d}" for d in range(rank))
        layout = InputBuffer("out0", out.dtype.name, (None,) * rank,
                             tuple(f"out0_st{d}" for d in range(rank)), "out0_off")
        kernel = Kernel(kernel_name("aten::cat"), [*bounds, *inputs],
                        [Pointwise("out0", out.dtype.name, ranges, inner)])
        return print_kernel(kernel, ranges, {"out0": layout}, frozenset(b.name for b in bounds))
    launch("aten::cat", key, build, values, [*parts, out], out.numel(), rt, names=names)
    return out
