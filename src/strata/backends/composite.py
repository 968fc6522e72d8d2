"""CompositeExplicitAutograd kernels: one implementation for every backend, written with ops.

``_to_copy`` is the one way data changes device or dtype: allocate on the target device, then
``copy_`` — whose key set holds both devices, so the higher backend's kernel (the one that can
see both memories) runs, as in PyTorch.
"""

from ..dispatch import register_kernel
from ..ops import activation as A
from ..ops import dense as DN
from ..ops import dropout as DO
from ..ops import factorization_composites as FC
from ..ops import factorizations as FZ
from ..ops import factory as F
from ..ops import linalg as L
from ..ops import linalg_composites as LC
from ..ops import loss as LO
from ..ops import lu as LU
from ..ops import nn_composites as NC
from ..ops import normalization as NO
from ..ops import pointwise_composites as PC
from ..ops import pooling as PL
from ..ops import reductions as RD
from ..ops import sampling as SA
from ..ops import scatter as SC
from ..ops import special as SP
from ..ops import split_join as SJ


def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    spec = F._to_copy.meta(self, dtype, layout, device, pin_memory, non_blocking, memory_format)
    out = F.empty_strided(spec.shape, spec.strides, dtype=spec.dtype,
                          device=device if device is not None else self.device)
    return F.copy_(out, self, non_blocking)


# Composites with a derivative row of their own: their decomposition runs below autograd, so
# autograd records one node (``VarMeanBackward0``), as ATen's CompositeExplicitAutograd ops do.
# In-place ones use their out-of-place op's row (``addcmul_`` records AddcmulBackward0).
WITH_OWN_DERIVATIVE = (
    # pointwise, special
    PC.rsub, PC.lerp, PC.lerp_, PC.addcmul, PC.addcmul_, PC.addcdiv, PC.addcdiv_, PC.clamp_min,
    PC.clamp_min_, PC.clamp_max, PC.clamp_max_, PC.logaddexp, PC.logaddexp2, PC.ldexp, PC.ldexp_,
    SP.xlogy, SP.logit, SP.logit_, SP.sinc, SP.sinc_, SP.mvlgamma, SP.mvlgamma_,
    # factory, shape, reductions
    F.zero_, F.fill_tensor_, SJ.split, SJ.split_with_sizes, SJ.unbind, SJ.block_diag, RD.std,
    RD.var_mean, RD.std_mean, RD.nansum, RD.aminmax, RD.logsumexp,
    # activation
    A.hardtanh_backward, A.leaky_relu_backward, A.softshrink_backward,
    A.hardshrink_backward, A.hardswish_backward, A.elu_backward, A.log_sigmoid, A.glu,
    A._prelu_kernel, A._prelu_kernel_backward,
    # dropout, loss
    DO.native_dropout, LO.mse_loss, LO.huber_loss, LO.smooth_l1_loss,
    LO.binary_cross_entropy_backward, LO.binary_cross_entropy_with_logits,
    # scatter, linalg
    SC.scatter_, SC.scatter_value_, SC.scatter_add_, SC.scatter_reduce_, LC.trace, L.addmm_,
    L.dot, LC.vdot, L.mv, LC.addmv, LC.baddbmm, LC.addbmm, LC.linalg_cross, LC.diag_embed,
    LC.cdist,
    # factorizations, lu
    FZ.cholesky, FC.linalg_solve_triangular, FC.linalg_matrix_exp, LU.linalg_slogdet,
    FC.linalg_lstsq,
    # nn
    NC.pixel_shuffle, NC.pixel_unshuffle, NC.channel_shuffle, NO.native_layer_norm_backward,
    DN.embedding_dense_backward,
    # pooling
    PL.max_pool3d_with_indices, PL.adaptive_max_pool3d, PL.adaptive_avg_pool3d,
    PL.avg_pool3d, PL.max_unpool2d, PL.max_unpool3d,
    # sampling
    SA.affine_grid_generator,
)


def _new_tensors(decomposition):
    """The kernel of a CompositeExplicitAutograd op that is neither a view nor in place: an
    output that the decomposition made as a view of its own temporary (``dot``: a reshape of an
    ``mm``) is a new tensor to autograd, so an in-place write into it later is recorded on it
    and not on the temporary (ATen's autograd sees only its outputs)."""
    def kernel(*args):
        out = decomposition(*args)
        if type(out) is tuple or type(out) is list:
            for t in out:   # None: an output the op's mask left out
                if t is not None and t._base is not None and all(t is not a for a in args):
                    t._base = None
        elif out._base is not None and all(out is not a for a in args):   # one attribute read
            out._base = None
        return out
    kernel.__name__ = kernel.__qualname__ = decomposition.__name__
    return kernel


def register():
    register_kernel(F._to_copy, "CompositeExplicitAutograd", _to_copy)
    for op in WITH_OWN_DERIVATIVE:
        kernel = op.decomposition
        if not (op.is_view or op.is_inplace):
            kernel = _new_tensors(kernel)
        register_kernel(op, "CompositeExplicitAutograd", kernel)
