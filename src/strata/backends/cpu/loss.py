"""CPU kernels for the primitive losses of ``ops/loss.py`` (the rest are composites)."""

import numpy as np

from ...ops import loss as L
from .array import COMPUTE, compute_data, data, wrap


def _targets(target, ignore_index, n_classes):
    """Targets as a flat int64 array plus the mask of the ones in use; IndexError for the first
    target (in order) outside [0, n_classes) that is not ``ignore_index``."""
    t = data(target).reshape(-1).astype(np.int64, copy=False)
    used = t != ignore_index
    bad = used & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[np.argmax(bad)]} is out of bounds.")
    return t, used


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    out_spec, _ = L.nll_loss_forward.meta(self, target, weight, reduction, ignore_index)
    dt = self.dtype
    x = compute_data(self, dt)
    x = x.reshape(1, -1) if x.ndim == 1 else x
    t, used = _targets(target, ignore_index, x.shape[1])
    rows = np.flatnonzero(used)
    picked = x[rows, t[rows]]
    w = compute_data(weight, dt)[t[rows]] if weight is not None else None
    losses = -picked if w is None else -picked * w
    if out_spec.shape:  # reduction='none' on a batch: one loss per row, 0 where ignored
        out = np.zeros(out_spec.shape, COMPUTE[dt])
        out[rows] = losses
        return wrap(out, dt), wrap(np.zeros((), COMPUTE[dt]), dt)
    total_weight = np.asarray(rows.size if w is None else w.sum(), COMPUTE[dt])
    total = np.asarray(losses.sum(), COMPUTE[dt])
    if L.reduction_enum(reduction) == L.MEAN:
        total = total / total_weight   # all ignored (or empty): 0 / 0 = nan, as in PyTorch
    return wrap(total, dt), wrap(total_weight, dt)


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    spec = L.nll_loss_backward.meta(grad_output, self, target, weight, reduction, ignore_index,
                                    total_weight)
    dt = self.dtype
    grad = np.zeros(spec.shape, COMPUTE[dt])
    rows_grad = grad.reshape(1, -1) if grad.ndim == 1 else grad
    t, used = _targets(target, ignore_index, rows_grad.shape[1])
    rows = np.flatnonzero(used)
    g = compute_data(grad_output, dt)
    if L.reduction_enum(reduction) == L.NONE and self.ndim == 2:
        scale = -g[rows]
    else:
        g = g.reshape(())
        if L.reduction_enum(reduction) == L.MEAN:
            g = g / compute_data(total_weight, dt).reshape(())
        scale = -g
    if weight is not None:
        scale = scale * compute_data(weight, dt)[t[rows]]
    rows_grad[rows, t[rows]] = scale
    return wrap(grad, dt)


def binary_cross_entropy(self, target, weight=None, reduction=L.MEAN):
    spec = L.binary_cross_entropy.meta(self, target, weight, reduction)
    dt = self.dtype
    x, y = compute_data(self, dt), compute_data(target, dt)
    # not (0 <= x <= 1) also catches nan
    if not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((y >= 0) & (y <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    # -(y * log(x) + (1 - y) * log(1 - x)), each log clamped at -100 so 0 * log(0) stays finite
    loss = (y - 1) * np.maximum(np.log(1 - x), -100) - y * np.maximum(np.log(x), -100)
    if weight is not None:
        loss = loss * compute_data(weight, dt)
    r = L.reduction_enum(reduction)
    if r == L.MEAN:
        loss = np.mean(loss) if loss.size else np.array(np.nan, loss.dtype)
    elif r == L.SUM:
        loss = np.sum(loss)
    return wrap(np.asarray(loss, COMPUTE[dt]).reshape(spec.shape), dt)


KERNELS = {
    L.nll_loss_forward: nll_loss_forward,
    L.nll_loss_backward: nll_loss_backward,
    L.binary_cross_entropy: binary_cross_entropy,
}
