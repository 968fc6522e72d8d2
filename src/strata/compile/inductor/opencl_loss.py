"""The OpenCL device's value-addressed kernels: ``nll_loss`` forward and backward (so
``cross_entropy``, which decomposes into ``log_softmax`` and ``nll_loss``), ``index_add_`` (so
the backward of ``embedding`` and ``index_select``) and ``arange``.

Both are loop-IR pointwise kernels whose loads are addressed by loaded values (the target
picks a class): forward, one work-item per row writes ``-w[t] * x[i, t]`` and ``w[t]`` (0 for an
ignored row), then the sum kernels reduce them; backward, one work-item per element of the
gradient writes ``-g * w[t] / total_weight`` where its class is the row's target, else 0 (no
scatter). Targets and indices are checked on the device (opencl_checks.py): an out-of-range one
raises PyTorch's error at the next sync point, and reads nothing outside its buffer meanwhile
(a bad target counts as an ignored row).
"""

import numpy as np

from ...backends.opencl import runtime as R
from ...core.shape import broadcast_shapes, contiguous_strides
from ...ops import factory as F
from ...ops import loss as LOSS
from ...ops import scatter as SC
from .ir import InputBuffer, Kernel, Pointwise, Reduction, ops
from .oclprinter import FP64, print_kernel
from .opencl_checks import CHECK_NAMES, check_indices, device_slot, with_first_item_check
from .opencl_pointwise import (
    fill_,
    kernel_name,
    launch,
    math_formula,
    pointwise,
    runtime_of,
    scalar_argument,
    tensor_names,
    tensor_values,
)
from .opencl_rows import reduce


def indexed_pointwise(op_name, key, tensors, scalars, out, inner):
    """``out[index] = inner(buffers, index)``: ``tensors`` ({name: opencl tensor}; not ``x``
    or ``y``, the printer's index variables) are read
    through ``InputBuffer``s with runtime strides, ``scalars`` ({name: numpy scalar}) by value;
    ``key`` names the kernel's structure for the program cache."""
    rt = runtime_of(out)
    values = list(scalars.values())
    for t in (*tensors.values(), out):
        values += tensor_values(rt, t)
    values += out._shape

    def names():
        listed = list(scalars)
        for name, t in (*tensors.items(), ("out0", out)):
            listed += tensor_names(name, t.ndim)
        return listed + [f"s{d}" for d in range(out.ndim)]
    shapes = tuple((n, t.ndim, t.dtype.name) for n, t in tensors.items())
    full_key = (op_name, key, shapes, out.ndim, out.dtype.name,
                tuple((n, type(v)) for n, v in scalars.items()))     # NumPy scalar types

    def build():
        def buf(name, t):
            return InputBuffer(name, t.dtype.name, (None,) * t.ndim,
                               tuple(f"{name}_st{d}" for d in range(t.ndim)), f"{name}_off")
        buffers = {n: buf(n, t) for n, t in tensors.items()}
        inputs = list(buffers.values())
        for n, v in scalars.items():
            buffers[n] = InputBuffer(n, str(v.dtype), (), ())     # numpy's name is strata's
            inputs.append(buffers[n])
        ranges = tuple(f"s{d}" for d in range(out.ndim))
        node = Pointwise("out0", out.dtype.name, ranges, lambda index: inner(buffers, index))
        return print_kernel(Kernel(kernel_name(op_name), inputs, [node]), ranges,
                            {"out0": buf("out0", out)}, frozenset(scalars))
    launch(op_name, full_key, build, values, [*tensors.values(), out], out.numel(), rt,
           names=names)
    return out


def _picked_class(b, row, ignore_index):
    """(the row's target, or 0 where ignored or out of range, so that no load goes out of
    bounds; in use: neither)."""
    t = ops.load("target", b["target"].index(row))
    inside = ops.logical_and(ops.ge(t, ops.constant(0, "int64")),
                             ops.lt(t, ops.load("classes", "0")))
    used = ops.logical_and(ops.ne(t, ops.load("ignore", "0")), inside)
    return ops.where(used, t, ops.constant(0, "int64")), used


def _weight_of(b, t, dtype, weighted):
    return ops.load("weight", b["weight"].index((str(t),))) if weighted else \
        ops.constant(1, dtype)


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    out_spec, _ = LOSS.nll_loss_forward.meta(self, target, weight, reduction, ignore_index)
    rt = runtime_of(self)
    classes = self._shape[-1]
    if not out_spec.shape:
        fused = _reduced_nll_loss(rt, self, target, weight, reduction, ignore_index)
        if fused is not None:
            return fused
    check_indices(target, classes, IndexError, "Target {} is out of bounds.", ignore_index)
    x = self if self.ndim == 2 else self.reshape(1, classes)
    rows = x._shape[0]
    dt = self.dtype.name
    tensors = {"inp": x, "target": target.reshape(rows)}
    weighted = weight is not None
    if weighted:
        tensors["weight"] = weight
    scalars = {"ignore": np.int64(ignore_index), "classes": np.int64(classes)}

    def loss(b, index):
        t, used = _picked_class(b, index, ignore_index)
        w = _weight_of(b, t, dt, weighted)
        value = ops.neg(ops.mul(ops.load("inp", b["inp"].index((index[0], str(t)))), w))
        return ops.where(used, value, ops.constant(0, dt))

    def row_weight(b, index):
        t, used = _picked_class(b, index, ignore_index)
        return ops.where(used, _weight_of(b, t, dt, weighted), ops.constant(0, dt))
    losses = rt.empty((rows,), (1,), self.dtype)
    indexed_pointwise("aten::nll_loss_forward", ("loss", weighted), tensors, scalars, losses,
                      loss)
    total_weight = rt.empty((), (), self.dtype)
    if out_spec.shape:                               # reduction='none'
        return losses, fill_(total_weight, 0)
    weights = rt.empty((rows,), (1,), self.dtype)
    indexed_pointwise("aten::nll_loss_forward", ("weight", weighted), tensors, scalars, weights,
                      row_weight)
    reduce("aten::sum.dim_IntList", "sum", weights, [0], False, self.dtype,
           [(total_weight, "value")])
    total = rt.empty((), (), self.dtype)
    reduce("aten::sum.dim_IntList", "sum", losses, [0], False, self.dtype, [(total, "value")])
    if LOSS.reduction_enum(reduction) == LOSS.MEAN:    # all ignored: 0 / 0 = nan, as in PyTorch
        total = pointwise("aten::div.Tensor", _DIVIDE,
                          [(total, self.dtype), (total_weight, self.dtype)],
                          rt.empty((), (), self.dtype))
    return total, total_weight


_DIVIDE = math_formula("truediv")   # made once: a formula is part of its kernel's key

# Note [Fused nll_loss]: a summed or averaged ``nll_loss`` is one work-group, as CUDA's
# nll_loss_forward_reduce_cuda_kernel_2d is one block: each work-item walks a stride of the rows,
# checks its targets (a bad one is flagged in the device-side assert slot of opencl_checks.py's
# check and counts as ignored), sums -w[t] * x[r, t] and w[t], a tree in local memory adds the
# work-items' sums, and the first writes the total weight and the loss (divided by it for
# 'mean': all ignored gives 0 / 0 = nan, as in PyTorch). One launch, where the general path
# makes six (the check, two pointwise kernels, two sums, the division).
_REDUCED = """__kernel void k_nll_loss_forward(
        __global const T* restrict inp, const long inp_off, const long inp_st0,
        const long inp_st1, __global const I* restrict target, const long target_off,
        const long target_st0, __global const T* restrict weight, const long weight_off,
        const long weight_st0, const long weighted, const long rows, const long classes,
        const long ignore, const long mean, __global T* restrict out, const long out_off,
        __global T* restrict total_weight, const long total_weight_off,
        __global long* restrict flags, const long slot) {
    __local T losses[GROUP];
    __local T weights[GROUP];
    const int lid = get_local_id(0);
    T loss = 0, weight_sum = 0;
    for (long r = lid; r < rows; r += GROUP) {
        const long t = target[target_off + r * target_st0];
        if (t == ignore) continue;
        if (t < 0 || t >= classes) {
            flags[2 * slot + 1] = t;
            flags[2 * slot] = 1;
            continue;
        }
        const T w = weighted ? weight[weight_off + t * weight_st0] : (T)1;
        loss += -(inp[inp_off + r * inp_st0 + t * inp_st1] * w);
        weight_sum += w;
    }
    losses[lid] = loss;
    weights[lid] = weight_sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int width = GROUP / 2; width > 0; width >>= 1) {
        if (lid < width) {
            losses[lid] += losses[lid + width];
            weights[lid] += weights[lid + width];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        total_weight[total_weight_off] = weights[0];
        out[out_off] = mean ? losses[0] / weights[0] : losses[0];
    }
}
"""
_REDUCED_NAMES = ["inp", "inp_off", "inp_st0", "inp_st1", "target", "target_off", "target_st0",
                  "weight", "weight_off", "weight_st0", "weighted", "rows", "classes", "ignore",
                  "mean", "out", "out_off", "total_weight", "total_weight_off", "flags", "slot"]
_TARGET_TYPES = {"int64": "long", "int32": "int"}
_TARGET_ERROR = (IndexError, "Target {} is out of bounds.")     # opencl_checks.py's key


def _reduced_nll_loss(rt, x, target, weight, reduction, ignore_index):
    """(loss, total weight) of a summed or averaged ``nll_loss`` in one launch (Note [Fused
    nll_loss]), or None where the general path must run: half dtypes, every assert slot
    taken."""
    index_type = _TARGET_TYPES.get(target.dtype.name)
    if x.dtype.name not in ("float32", "float64") or index_type is None:
        return None
    slot = device_slot(target, *_TARGET_ERROR)
    if slot is None:
        return None
    rows, classes = (x._shape if x.ndim == 2 else (1, x._shape[0]))
    x_strides = x._get_strides() if x.ndim == 2 else (0, *x._get_strides())
    group = 1 << (min(rt.cl_device.max_work_group_size, 256).bit_length() - 1)
    out, total_weight = (rt.empty((), (), x.dtype) for _ in range(2))
    weighted = weight is not None
    values = [*rt.buffer_of(x), *x_strides, *rt.buffer_of(target),
              target._get_strides()[0] if target.ndim else 0,
              *(rt.buffer_of(weight) if weighted else (None, 0)),
              weight._get_strides()[0] if weighted else 0, int(weighted), rows, classes,
              ignore_index, int(LOSS.reduction_enum(reduction) == LOSS.MEAN),
              *rt.buffer_of(out), *rt.buffer_of(total_weight), rt.asserts.buffer, slot]
    ctype = "double" if x.dtype.name == "float64" else "float"

    def build():
        source = f"#define T {ctype}\n#define I {index_type}\n#define GROUP {group}\n" + \
            _REDUCED
        return (FP64 + source if ctype == "double" else source), _REDUCED_NAMES
    tensors = [x, target, out, total_weight] + ([weight] if weighted else [])
    launch("aten::nll_loss_forward", ("nll_loss_forward_reduce", ctype, index_type, group),
           build, values, tensors, (group,), rt, local_size=(group,),
           names=lambda: _REDUCED_NAMES)
    return out, total_weight


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    spec = LOSS.nll_loss_backward.meta(grad_output, self, target, weight, reduction,
                                       ignore_index, total_weight)
    rt = runtime_of(self)
    classes = self._shape[-1]
    rows = self._shape[0] if self.ndim == 2 else 1
    dt = self.dtype.name
    per_row = LOSS.reduction_enum(reduction) == LOSS.NONE and self.ndim == 2
    mean = LOSS.reduction_enum(reduction) == LOSS.MEAN
    grad = rt.empty((rows, classes), contiguous_strides((rows, classes)), self.dtype)
    tensors = {"g": grad_output.reshape(rows) if per_row else grad_output.reshape(()),
               "target": target.reshape(rows), "tw": total_weight.reshape(())}
    weighted = weight is not None
    if weighted:
        tensors["weight"] = weight
    scalars = {"ignore": np.int64(ignore_index), "classes": np.int64(classes)}

    def inner(b, index):
        row, column = index
        t, used = _picked_class(b, (row,), ignore_index)
        g = ops.load("g", b["g"].index((row,) if per_row else ()))
        if mean:
            g = ops.truediv(g, ops.load("tw", b["tw"].index(())))
        value = ops.neg(ops.mul(g, _weight_of(b, t, dt, weighted)))
        hit = ops.logical_and(used, ops.eq(ops.index_expr(column, "int64"), t))
        return ops.where(hit, value, ops.constant(0, dt))
    indexed_pointwise("aten::nll_loss_backward", (per_row, mean, weighted), tensors, scalars,
                      grad, inner)
    return grad.reshape(spec.shape)


def arange(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    """``first + i * delta``, computed in float64 for floating dtypes (ATen's accumulate type
    on the CPU) and int64 for integers, then converted."""
    spec = F.arange.meta(start, end, step, dtype, layout, device, pin_memory)
    n, first, delta = F.arange_params(start, end, step, spec.dtype)
    out = R.get(R.device_index(device)).empty((n,), (1,), spec.dtype)
    acc = np.float64 if spec.dtype.is_floating_point else np.int64
    scalars = {"first": acc(first), "delta": acc(delta)}

    def inner(b, index):
        i = ops.index_expr(index[0], acc.__name__)
        value = ops.add(ops.load("first", "0"), ops.mul(i, ops.load("delta", "0")))
        return ops.to_dtype(value, spec.dtype.name)
    return indexed_pointwise("aten::arange.start_step", acc.__name__, {}, scalars, out, inner)


def index_add_(self, dim, index, source, alpha=1):
    """``self[.., index[p], ..] += alpha * source[.., p, ..]`` without atomics: each element of
    ``self`` sums, in a loop-IR reduction over the positions ``p``, the sources whose index
    names its row (deterministic; costs numel(self) x len(index))."""
    SC.index_add_.meta(self, dim, index, source, alpha)
    target = self if self.ndim else self.reshape(1)
    d = dim % target.ndim
    size = target._shape[d]
    error = (RuntimeError, f"index {{}} is out of bounds for dimension {d} with size {size}")
    slot = device_slot(index, *error) if target.numel() and index.numel() else None
    if slot is None:       # else its first work-item checks (Note [Checks in the first ...])
        check_indices(index, size, *error)
    if not index.numel():
        return self
    src = source if source.ndim else source.reshape(1)
    rt = runtime_of(self)
    dt = self.dtype.name
    flat_index = index.reshape(-1)
    values = [scalar_argument(alpha, self.dtype), index.numel(), *tensor_values(rt, src),
              *tensor_values(rt, flat_index), *tensor_values(rt, target), *target._shape]
    if slot is not None:
        values += [size, size, rt.asserts.buffer, slot]

    def names():
        return ["alpha", "positions", *tensor_names("src", src.ndim),
                *tensor_names("idx", 1), *tensor_names("out0", target.ndim),
                *(f"s{k}" for k in range(target.ndim)),
                *(("high", *CHECK_NAMES) if slot is not None else ())]
    key = (d, target.ndim, dt, src.dtype.name, index.dtype.name, slot is not None)

    def build():
        def buf(name, t):
            return InputBuffer(name, t.dtype.name, (None,) * t.ndim,
                               tuple(f"{name}_st{k}" for k in range(t.ndim)), f"{name}_off")
        src_b, idx_b, out_b = buf("src", src), buf("idx", index.reshape(-1)), buf("out0", target)
        ranges = tuple(f"s{k}" for k in range(target.ndim))

        def contribution(i, r):
            p = r[0]
            hit = ops.eq(ops.load("idx", idx_b.index((p,))), ops.index_expr(i[d], "int64"))
            v = ops.load("src", src_b.index((*i[:d], p, *i[d + 1:])))
            v = v if src.dtype == self.dtype else ops.to_dtype(v, dt)
            return ops.where(hit, v, ops.constant(0, dt))

        def outside(i, r):
            at = ops.load("idx", idx_b.index((r[0],)))
            bad = ops.logical_or(ops.lt(at, ops.constant(0, index.dtype.name)),
                                 ops.ge(at, ops.load("high", "0")))
            return ops.where(bad, ops.constant(1, "int64"), ops.constant(0, "int64"))

        def result(i):
            old = ops.load("out0", out_b.index(i))
            new = ops.add(old, ops.mul(ops.load("alpha", "0"), ops.load("red", "0")))
            if slot is None:
                return new
            return ops.where(ops.ne(ops.load("bad", "0"), ops.constant(0, "int64")), old, new)
        nodes = [Reduction("red", dt, ranges, ("positions",), "sum", contribution),
                 Pointwise("out0", dt, ranges, result)]
        inputs = [src_b, idx_b, InputBuffer("alpha", dt, (), ())]
        scalars = {"alpha"}
        if slot is not None:      # a bad index leaves self as it was (Note [Checks in the ...])
            nodes.insert(1, Reduction("bad", "int64", ranges, ("positions",), "max", outside))
            inputs.append(InputBuffer("high", "int64", (), ()))
            scalars.add("high")
        printed = print_kernel(Kernel(kernel_name("aten::index_add_"), inputs, nodes,
                                      frozenset({"red", "bad"})), ranges, {"out0": out_b},
                               frozenset(scalars))
        return printed if slot is None else with_first_item_check(printed, "idx", "positions")
    launch("aten::index_add_", ("aten::index_add_", *key), build, values,
           [src, index, target], target.numel(), rt, names=names)
    return self


def binary_cross_entropy(self, target, weight=None, reduction=LOSS.MEAN):
    """``-(y log x + (1 - y) log(1 - x))``, each log clamped at -100, times the weight, then
    reduced. The ranges of input and target are checked first, as the CPU checks them: one
    device reduction each, read back (CUDA asserts in the kernel instead)."""
    spec = LOSS.binary_cross_entropy.meta(self, target, weight, reduction)
    for name, t in (("input", self), ("target", target)):
        outside = t.lt(0).logical_or(t.gt(1)).logical_or(t.isnan())
        if t.numel() and outside.any().item():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    shape = tuple(spec.shape) if LOSS.reduction_enum(reduction) == LOSS.NONE else \
        tuple(broadcast_shapes(*(tuple(t._shape) for t in (self, target, weight)
                                 if t is not None)))
    operands = [(t, self.dtype) for t in (self, target, weight) if t is not None]
    loss = pointwise("aten::binary_cross_entropy", _bce, operands,
                     runtime_of(self).empty(shape, contiguous_strides(shape), self.dtype))
    r = LOSS.reduction_enum(reduction)
    return loss.mean() if r == LOSS.MEAN else loss.sum() if r == LOSS.SUM else loss


def _bce(x, y, *weight):
    floor, one = ops.constant(-100, x.dtype), ops.constant(1, x.dtype)
    log_x = ops.maximum(ops.log(x), floor)
    log_rest = ops.maximum(ops.log(ops.sub(one, x)), floor)
    loss = ops.sub(ops.mul(ops.sub(y, one), log_rest), ops.mul(y, log_x))
    return ops.mul(loss, weight[0]) if weight else loss


