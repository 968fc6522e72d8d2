"""Derivatives of ``ops/pooling.py``'s backward ops (the pooling ops' own rows are in
``nn.py``'s pooling section).

``max_pool2d_with_indices_backward`` is linear in ``grad_output``: it sends each output's
gradient to the input element its index names, so its own gradient reads that element back
(PyTorch's ``max_pool_double_backward``); the input's values only chose the indices.
"""

from ...ops import pooling as PL
from ...ops import scatter as SC
from ...ops import shape as S
from . import derivative


@derivative(PL.max_pool2d_with_indices_backward, "MaxPool2DWithIndicesBackwardBackward0",
            save=("indices",))
def _max_pool2d_backward(ctx, grad):
    indices = ctx.indices
    lead = tuple(indices._shape[:-2])
    plane = S.reshape(grad, lead + (grad._shape[-2] * grad._shape[-1],))
    n_out = indices._shape[-2] * indices._shape[-1]
    picked = SC.gather(plane, len(lead), S.reshape(indices, lead + (n_out,)))
    return S.reshape(picked, indices._shape), None, None
