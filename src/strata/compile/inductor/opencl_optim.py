"""The OpenCL device's fused optimizer updates: Adam's (and AdamW's) and SGD-with-momentum's
step as one kernel per parameter (or flat bucket), or one kernel for every parameter of a group
(multi-tensor), where the op path launches about ten per parameter.

The same hook and the same arithmetic as the CPU's generated C (eager_optim.py, reached through
optim/_native_update.py): each operation in the op path's order, each result rounded to the
dtype, no contraction into FMAs (``FP_CONTRACT OFF``). Written by hand like the GEMM: one device
function per update, one line per op, called by both kernels, so a parameter updated alone and
one updated with its group get the same bits. The tensors must be contiguous opencl tensors of
one floating dtype; ``False`` sends the caller back to its ops.

Note [Multi-tensor updates]: as torch's ``_fused_adam_`` and ``multi_tensor_apply``, one launch
updates a list of parameters. OpenCL 1.2 has no pointers in buffers, so a launch takes up to
``SLOTS`` segment buffers as arguments (the caching allocator packs small tensors into a few
2 MiB segments: the tiny GPT's 30 parameters, their gradients and Adam's state sit in 4-6) and
a table in device memory with one row per parameter: where its elements start in the launch,
then for each of its tensors (param, grad, state...) the slot of its buffer and its element
offset there. Work-item ``g`` finds its row by bisection over the starts. A group whose tensors
span more buffers takes a launch per ``SLOTS`` of them. The table is uploaded once and kept
while the tensors stay where they are (an LRU of ``TABLES_KEPT`` tables per device): a training
step frees and allocates the same blocks in the same order, so its gradients come back to the
same offsets and the table is uploaded in the first steps only.

Note [Kept checks]: checking that every tensor qualifies and finding its buffer was most of an
opencl ``opt.step()``: ~250 of ~390 us of the tiny GPT's AdamW over 30 parameters (120 tensors).
The parameters and the optimizer's state stay where they are from step to step, so their checks
and places are kept, with each tensor's storage, offset, shape, strides and dtype, which decide
them (``set_``, ``.data =``, ``resize_`` and ``as_strided_`` change them; a tensor put in
another's place has its own): while all of those are the kept ones, only the gradients (new
tensors after ``zero_grad()``) are checked and placed again. The optimizer keeps them (its
``_plans``, as the CPU's Note [Cached update plan]), so they live no longer than it: what they
hold, it holds.
"""

from collections import OrderedDict

import numpy as np

from ...core import dtype as D
from .oclprinter import CL_TYPES, FP64
from .opencl_pointwise import is_device, launch, runtime_of

SLOTS = 8              # segment buffers one multi-tensor launch takes (Note [Multi-tensor updates])
TABLES_KEPT = 16       # tables kept on each device, least recently used dropped first
KEPT_PLANS = 4         # checked layouts a caller keeps (Note [Kept checks]): one per step count

_ADAM = """void adam_step(__global T* param, __global const T* grad, __global T* exp_avg,
               __global T* exp_avg_sq, const long i, const T weight, const T beta2,
               const T one_minus_beta2, const T bias_correction2_sqrt, const T eps,
               const T step DECAY_PARAM) {
    const T p = param[i] DECAY;
    const T g = grad[i];
    const T m0 = exp_avg[i];
    const T m = m0 + (g - m0) * weight;                                        /* lerp_ */
    const T v = exp_avg_sq[i] * beta2 + (g * one_minus_beta2) * g;
    const T denom = sqrt(v) / bias_correction2_sqrt + eps;
    param[i] = p + (m * step) / denom;                                        /* addcdiv_ */
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
}
"""
_SGD = """void sgd_momentum_step(__global T* param, __global const T* grad, __global T* buf,
                       const long i, const T momentum, const T one_minus_dampening,
                       const T step, const long nesterov) {
    const T g = grad[i];
    const T b = buf[i] * momentum + g * one_minus_dampening;                  /* mul_, add_ */
    const T direction = nesterov ? g + b * momentum : b;
    param[i] = param[i] + direction * step;                                   /* add_ */
    buf[i] = b;
}
"""
# AdamW: the decoupled decay's ``param.mul_(decay)`` folded in, rounded as the op rounds it
_ADAMW = _ADAM.replace("void adam_step", "void adamw_step") \
    .replace(" DECAY_PARAM", ", const T decay") \
    .replace(" DECAY;", " * decay;                    /* mul_ */")
_ADAM = _ADAM.replace(" DECAY_PARAM", "").replace(" DECAY;", ";")
_TENSORS = {"adam_step": ("param", "grad", "exp_avg", "exp_avg_sq"),
            "adamw_step": ("param", "grad", "exp_avg", "exp_avg_sq"),
            "sgd_momentum_step": ("param", "grad", "buf")}
_ADAM_SCALARS = ("weight", "beta2", "one_minus_beta2", "bias_correction2_sqrt", "eps", "step")
_SCALARS = {"adam_step": _ADAM_SCALARS, "adamw_step": (*_ADAM_SCALARS, "decay"),
            "sgd_momentum_step": ("momentum", "one_minus_dampening", "step")}
_FUNCTIONS = {"adam_step": _ADAM, "adamw_step": _ADAMW, "sgd_momentum_step": _SGD}
_FLAGS = {"adam_step": (), "adamw_step": (), "sgd_momentum_step": ("nesterov",)}


def _constants(update):
    """The kernels' by-value parameters of ``update``, declared, and their names."""
    names = (*_SCALARS[update], *_FLAGS[update])
    declared = [f"const T {n}" for n in _SCALARS[update]] + \
        [f"const long {n}" for n in _FLAGS[update]]
    return declared, names


def _single_kernel(update):
    """``k_<update>``: one parameter (or flat bucket), work-item ``i`` its element ``i``."""
    declared, names = _constants(update)
    params = []
    for name in _TENSORS[update]:
        params += (f"__global T* restrict {name}", f"const long {name}_off")
    pointers = ", ".join(f"{name} + {name}_off" for name in _TENSORS[update])
    return (f"__kernel void k_{update}({', '.join(params + declared)}) {{\n"
            f"    {update}({pointers}, get_global_id(0), {', '.join(names)});\n}}\n")


def _multi_kernel(update):
    """``k_multi_tensor_<update>``: the parameters of a table's rows (Note [Multi-tensor
    updates])."""
    declared, names = _constants(update)
    slots = [f"__global T* b{s}" for s in range(SLOTS)]
    width = 1 + 2 * len(_TENSORS[update])
    pointers = ", ".join(f"slots[row[{1 + 2 * r}]] + row[{2 + 2 * r}]"
                         for r in range(len(_TENSORS[update])))
    return f"""__kernel void k_multi_tensor_{update}({", ".join(slots)},
        __global const long* table, const long table_off, const long count,
        {", ".join(declared)}) {{
    __global T* const slots[{SLOTS}] = {{{", ".join(f"b{s}" for s in range(SLOTS))}}};
    const long g = get_global_id(0);
    table += table_off;
    long lo = 0, hi = count;               /* the last row whose start is at most g */
    while (hi - lo > 1) {{
        const long mid = (lo + hi) / 2;
        if (table[mid * {width}] <= g)
            lo = mid;
        else
            hi = mid;
    }}
    __global const long* row = table + lo * {width};
    {update}({pointers}, g - row[0], {", ".join(names)});
}}
"""


def _names(update):
    names = []
    for name in _TENSORS[update]:
        names += (name, f"{name}_off")
    return [*names, *_SCALARS[update], *_FLAGS[update]]


def _multi_names(update):
    return [*(f"b{s}" for s in range(SLOTS)), "table", "table_off", "count",
            *_SCALARS[update], *_FLAGS[update]]


_NAMES = {update: _names(update) for update in _TENSORS}


def _build(update, dtype, multi):
    def build():
        ctype = CL_TYPES[dtype.name]
        kernel = _multi_kernel(update) if multi else _single_kernel(update)
        source = f"#pragma OPENCL FP_CONTRACT OFF\n#define T {ctype}\n" + \
            _FUNCTIONS[update] + kernel
        names = _multi_names(update) if multi else _NAMES[update]
        return (FP64 + source if ctype == "double" else source), names
    return build


def _fits(tensors):
    first = tensors[0]
    if first.dtype not in (D.float32, D.float64):
        return False
    return all(is_device(t) and t.device == first.device and t.dtype == first.dtype and
               t.numel() == first.numel() and t.is_contiguous() for t in tensors)


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
        launch(update, (update, first.dtype.name), _build(update, first.dtype, False), values,
               list(tensors), first.numel(), rt, names=lambda: _NAMES[update])
        return True
    return run


class MultiTensorUpdate:
    """The multi-tensor hook of optim/_native_update.py for ``update``: ``plan(lists)`` works
    out the launches for the lists (one per tensor of the update: params, grads, state...; one
    entry per parameter), with no side effect, or returns None where they cannot run here;
    ``self(plan, scalars, *flags)`` launches them with one set of scalars (Note [Multi-tensor
    updates])."""

    def __init__(self, update):
        if len(_TENSORS[update]) > SLOTS:
            raise ValueError(f"{update}: a multi-tensor launch needs a slot per tensor of a row")
        self.update = update
        self._tables = {}        # device index -> OrderedDict(table rows -> device tensor)

    @classmethod
    def plan(cls, lists, kept=None):
        """[(segment buffers, table rows flattened, tensors, work-items)] of each launch: the
        parameters in order, a new launch where the next one's tensors would need more than
        ``SLOTS`` buffers; empty parameters left out. None unless every tensor is a
        contiguous opencl tensor of one device and floating dtype, the same size as the
        other tensors of its parameter. ``lists[1]`` are the gradients; ``kept``, a dict the
        caller keeps for these lists between steps (Note [Kept checks])."""
        first = lists[0][0]
        device, dtype = first.device, first.dtype
        if dtype not in (D.float32, D.float64) or device.type != "opencl":
            return None
        rt = runtime_of(first)
        kept = {} if kept is None else kept
        layout = [(t._storage_or_none, t._offset, t._shape, t._strides, t.dtype)
                  for i, tensors in enumerate(lists) if i != 1 for t in tensors]
        entry = kept.get(id(first))
        if entry is None or entry[0] != layout:
            places = cls._check(lists[:1] + lists[2:], device, dtype, rt)
            if places is None:
                return None
            if len(kept) >= KEPT_PLANS:
                kept.clear()
            entry = kept[id(first)] = (layout, places)
        column_places = entry[1]
        chunks, slots, rows, tensors, total = [], {}, [], [], 0
        for grad, (numel, places), column in zip(lists[1], column_places, zip(*lists)):
            if not (grad.dtype is dtype and is_device(grad) and grad.device == device and
                    grad.numel() == numel and grad.is_contiguous()):
                return None
            if not numel:
                continue
            places = [places[0], rt.buffer_of(grad), *places[1:]]
            new = {buffer for buffer, _ in places if buffer not in slots}
            if len(slots) + len(new) > SLOTS:       # (SLOTS >= the tensors of one row)
                chunks.append((list(slots), rows, tensors, total))
                slots, rows, tensors, total = {}, [], [], 0
            rows.append(total)
            for buffer, offset in places:
                rows += (slots.setdefault(buffer, len(slots)), offset)
            tensors += column
            total += numel
        if rows:
            chunks.append((list(slots), rows, tensors, total))
        return chunks

    @staticmethod
    def _check(lists, device, dtype, rt):
        """[(numel, the (buffer, offset) of each tensor)] of each parameter where every tensor
        of ``lists`` qualifies, else None."""
        columns = []
        for column in zip(*lists):
            numel = column[0].numel()
            for t in column:
                if not (is_device(t) and t.dtype is dtype and t.device == device and
                        t.numel() == numel and t.is_contiguous()):
                    return None
            columns.append((numel, [rt.buffer_of(t) for t in column]))
        return columns

    def __call__(self, plan, scalars, *flags):
        if not plan:
            return
        first = plan[0][2][0]
        rt = runtime_of(first)
        width = len(_TENSORS[self.update])
        constants = [*(first.dtype.np.type(v) for v in scalars), *flags]
        for buffers, rows, tensors, total in plan:
            table = self._table(rt, rows)
            values = [*buffers, *([None] * (SLOTS - len(buffers))), *rt.buffer_of(table),
                      len(tensors) // width, *constants]
            launch(f"multi_tensor_{self.update}",
                   (self.update, first.dtype.name, "multi", SLOTS),
                   _build(self.update, first.dtype, True), values, [*tensors, table], total,
                   rt, names=lambda: _multi_names(self.update))

    def _table(self, rt, rows):
        """The device copy of ``rows`` (int64), uploaded once and kept (an LRU)."""
        tables = self._tables.setdefault(rt.index, OrderedDict())
        key = tuple(rows)
        table = tables.get(key)
        if table is not None:
            tables.move_to_end(key)
            return table
        array = np.array(rows, np.int64)
        table = rt.empty((array.size,), (1,), D.int64)
        rt.upload(table, array, non_blocking=True)
        tables[key] = table
        if len(tables) > TABLES_KEPT:
            tables.popitem(last=False)
        return table
