"""Flatten parameters into one vector and back."""

from ...autograd.grad_mode import no_grad


def parameters_to_vector(parameters):
    from ...ops.shape import cat
    return cat([p.view(-1) for p in parameters], 0)


def vector_to_parameters(vec, parameters):
    from ..._tensor import Tensor
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[pointer:pointer + n].view_as(p))
            pointer += n
