"""``torch.cond`` and ``torch._higher_order_ops.while_loop`` in eager mode: the branch or loop
runs in Python on the operands, with PyTorch's checks of ``pred`` and of the carried values.
(PyTorch compiles both branches of ``cond`` even in eager mode, so it also refuses branches
whose outputs differ in shape or alias an input; strata runs only the taken branch and does
not check the other.) Inside ``strata.compile`` they are ordinary Python: the capture breaks
the graph at a data-dependent ``pred``, as at any ``if tensor:``."""

from .._tensor import _is_tensor

__all__ = ["cond", "while_loop"]


def _predicate(pred):
    if isinstance(pred, bool):
        return pred
    if not _is_tensor(pred) or pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"{pred}.")
    return bool(pred.item())


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``."""
    branch = true_fn if _predicate(pred) else false_fn
    return branch(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """``carried = body_fn(*carried)`` while ``cond_fn(*carried)``; the last ``carried``
    (a tuple as long as ``carried_inputs``)."""
    carried = tuple(carried_inputs)
    while _predicate(cond_fn(*carried)):
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"body_fn should return the same number of elements as "
                               f"carried_inputs: {len(out)} vs {len(carried)}")
        carried = out
    return carried
