"""Padding modules (``torch/nn/modules/padding.py``): ``F.pad`` with the mode and the number of
padded dims fixed by the class; ``padding`` is one int for every side or ``2 * dims`` ints
(left, right, top, bottom, front, back)."""

from .. import functional as F
from .module import Module
from .utils import _ntuple


class _PadNd(Module):
    _mode, _dims = "constant", 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._dims)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPad:
    """ZeroPad{1,2,3}d: ConstantPad{1,2,3}d with value 0, printed without the value."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.dim()}D input)")
        return super().forward(input)


def _by_dims(prefix, *bases):
    """``<prefix>1d``, ``2d`` and ``3d``: the classes of a family differ only in ``_dims``."""
    return tuple(type(f"{prefix}{n}d", bases, {"_dims": n, "__module__": __name__})
                 for n in (1, 2, 3))


ConstantPad1d, ConstantPad2d, ConstantPad3d = _by_dims("ConstantPad", _ConstantPadNd)
ZeroPad1d, ZeroPad2d, ZeroPad3d = (type(f"ZeroPad{c._dims}d", (_ZeroPad, c),
                                        {"__module__": __name__})
                                   for c in (ConstantPad1d, ConstantPad2d, ConstantPad3d))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _by_dims("ReflectionPad", _ReflectionPadNd)
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _by_dims("ReplicationPad",
                                                                _ReplicationPadNd)
CircularPad1d, CircularPad2d, CircularPad3d = _by_dims("CircularPad", _CircularPadNd)
