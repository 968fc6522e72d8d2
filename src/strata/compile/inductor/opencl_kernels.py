"""Every kernel of the ``opencl`` device, registered at the OpenCL dispatch key.

DESIGN.md's "one code generator, three users": each kernel is loop IR printed to OpenCL C
(oclprinter.py; opencl_pointwise.py, opencl_rows.py). Ops with no entry here get the
dispatcher's NotImplementedError ("Could not run 'aten::xxx' with arguments from the 'OpenCL'
backend"): nothing falls back to the CPU. Backends cannot import the compiler, so this module
hands the table to ``backends.opencl.register`` when strata is imported.
"""

from ...backends import opencl as backend
from ...ops import activation as A
from ...ops import factory as F
from ...ops import linalg as L
from ...ops import loss as LOSS
from ...ops import pointwise as P
from ...ops import reductions as RED
from ...ops import scatter as SC
from ...ops import shape as SH
from ...ops import special as SPC
from ...optim import _native_update
from . import opencl_cat as cat
from . import opencl_counting as counting
from . import opencl_elementwise as elementwise
from . import opencl_elementwise_complex as elementwise_complex
from . import opencl_embedding as embedding
from . import opencl_fft as fft
from . import opencl_indexing as indexing
from . import opencl_linalg as linalg
from . import opencl_linalg_host as linalg_host
from . import opencl_loss as loss
from . import opencl_nn as nn
from . import opencl_norm as norm
from . import opencl_optim as optim
from . import opencl_orthogonal as orthogonal
from . import opencl_random as random
from . import opencl_reductions as reductions
from . import opencl_resample as resample
from . import opencl_resize as resize
from . import opencl_rnn as rnn
from . import opencl_rnn_layers as rnn_layers
from . import opencl_rows as rows
from . import opencl_samplers as samplers
from . import opencl_shape as shape
from . import opencl_softmax as softmax
from . import opencl_sort as sorting
from .opencl_pointwise import (
    BINARY,
    COMPARISONS,
    UNARY,
    add_formula,
    alloc,
    backward_formula,
    binary,
    clamp,
    clone,
    copy_,
    fill_,
    filled,
    gelu,
    gelu_,
    math_formula,
    pow_,
    reshape_copy,
    silu,
    sub_formula,
    unary,
    where,
)


def kernels() -> dict:
    """{op: OpenCL kernel} for every op the opencl device runs."""
    table = {F.empty: alloc(F.empty), F.empty_strided: alloc(F.empty_strided), F.copy_: copy_,
             F.clone: clone, P.gelu: gelu, P.gelu_: gelu_,
             SPC.erf: unary(SPC.erf, math_formula("erf")),
             SPC.erf_: unary(SPC.erf_, math_formula("erf")),
             SPC.erfc: unary(SPC.erfc, math_formula("erfc")),
             SPC.erfc_: unary(SPC.erfc_, math_formula("erfc")),
             SPC.lgamma: unary(SPC.lgamma, math_formula("lgamma")),
             SPC.lgamma_: unary(SPC.lgamma_, math_formula("lgamma")),
             F.fill_: fill_, F.full: filled(F.full, 1),
             F.scalar_tensor: filled(F.scalar_tensor, 0), P.where: where,
             A._softmax: rows.softmax_kernel(A._softmax, rows.softmax_formula),
             A._log_softmax: rows.softmax_kernel(A._log_softmax, rows.log_softmax_formula),
             A._softmax_backward_data: rows.softmax_backward, A._safe_softmax: rows.safe_softmax,
             A._log_softmax_backward_data: rows.log_softmax_backward,
             SH.cat: cat.cat,
             SH.stack: rows.stack, P.clamp: clamp(P.clamp), P.clamp_: clamp(P.clamp_),
             RED.sum: rows.sum_dim, RED.mean: rows.mean_dim, L.mm: rows.mm, L.bmm: rows.bmm,
             L.addmm: rows.addmm, LOSS.nll_loss_forward: loss.nll_loss_forward,
             LOSS.nll_loss_backward: loss.nll_loss_backward,
             LOSS.binary_cross_entropy: loss.binary_cross_entropy,
             F.arange: loss.arange,
             SC.index_add_: loss.index_add_, P.pow: pow_(P.pow), P.pow_: pow_(P.pow_),
             A.tanh_backward: backward_formula(A.tanh_backward, "tanh_backward"),
             A.sigmoid_backward: backward_formula(A.sigmoid_backward, "sigmoid_backward"),
             A.gelu_backward: backward_formula(A.gelu_backward, "gelu_backward"),
             A.silu_backward: backward_formula(A.silu_backward, "silu_backward"),
             SH._reshape_copy: reshape_copy}
    table.update(random.kernels())
    table.update(nn.kernels())
    table.update(norm.KERNELS)
    table.update(samplers.KERNELS)
    table.update(resample.kernels())
    table.update(rnn.kernels())
    table.update(rnn_layers.kernels())
    table.update(counting.kernels())
    table.update(resize.kernels())
    table.update(sorting.kernels())
    table.update(reductions.kernels())
    table.update(shape.kernels())
    table.update(indexing.kernels())
    table.update(elementwise.kernels())
    table.update(elementwise_complex.kernels())
    table.update(fft.kernels())
    table.update(linalg.kernels())
    table.update(orthogonal.kernels())
    table.update(linalg_host.KERNELS)
    table.update(embedding.KERNELS)
    for name, formula in UNARY.items():
        fn = math_formula(formula)
        for op in (getattr(P, name), getattr(P, name + "_", None)):
            if op is not None:
                table[op] = unary(op, fn)
    for op in (P.silu, P.silu_):
        table[op] = unary(op, silu)
    for name, formula in BINARY.items():
        fn = math_formula(formula)
        for op in (getattr(P, name), getattr(P, name + "_", None)):
            if op is not None:
                table[op] = binary(op, fn)
    for name, fn in (("add", add_formula), ("sub", sub_formula)):
        table[getattr(P, name)] = binary(getattr(P, name), fn, alpha=True)
        table[getattr(P, name + "_")] = binary(getattr(P, name + "_"), fn, alpha=True)
    for name in COMPARISONS:
        fn = math_formula(name)
        table[getattr(P, name)] = binary(getattr(P, name), fn, compare=True)
        table[getattr(P, name + "_")] = binary(getattr(P, name + "_"), fn, compare=True)
    for op, kind in ((RED.amax, "max"), (RED.amin, "min")):
        table[op] = rows.extreme(op, kind)
    for op, kind in ((RED.max, "max"), (RED.min, "min")):
        table[op] = rows.full_extreme(op, kind)
    for op, kind in ((RED.max_dim, "argmax"), (RED.min_dim, "argmin")):
        table[op] = rows.extreme_dim(op, kind)
    for op, kind in ((RED.argmax, "argmax"), (RED.argmin, "argmin")):
        table[op] = rows.arg_kernel(op, kind)
    table.update(softmax.kernels(table))
    return table


backend.register(kernels())
for _update in ("adam_step", "adamw_step", "sgd_momentum_step"):
    _native_update.register_device_update("opencl", _update, optim.fused_update(_update))
    _native_update.register_device_group_update("opencl", _update,
                                                optim.MultiTensorUpdate(_update))
