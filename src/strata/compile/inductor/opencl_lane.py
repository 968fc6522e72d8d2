"""The OpenCL device's pointwise lane: out-of-place unary and binary ops skip their meta
function on a signature seen before (Note [Pointwise lane]); opencl_pointwise.py's ``unary``,
``binary`` and ``laned`` kernels use it, and through ``launch_lane`` the matrix products and
the sums and means of opencl_rows.py.
"""

import math

from ...backends.opencl.prepared import PreparedLaunch
from ...core import dtype as D
from ...core.tensor_impl import TensorImpl

# Note [Pointwise lane]: an out-of-place pointwise op's meta function (validation, promotion,
# broadcasting, the output's layout) and its launch layout depend only on its arguments'
# devices, dtypes, shapes and strides, its numbers' types and values, and the default dtype.
# The first call with such a signature runs the whole path and remembers its launch as a
# ``PreparedLaunch`` (backends/opencl/prepared.py: the output's layout, the kernel, the
# arguments with their constants); a later call with the same signature only allocates, writes
# the buffers and offsets and launches, as the CPU device's binary fast
# lane skips its checks (Note [Binary fast lane]). In-place ops are left out (their overlap
# checks look at storages; they build no signature), so are NaN numbers (never equal to
# themselves) and 0-dim CPU tensors.

_LANE_NUMBERS = frozenset((int, float, bool, str, type(None)))
_LANE_SIZE = 4096     # signatures kept per op; a program with ever new shapes starts over


class PointwiseLane:
    """The remembered launches of one pointwise op (Note [Pointwise lane])."""

    __slots__ = ("entries", "op_name")

    def __init__(self, op_name):
        self.op_name = op_name
        self.entries = {}

    @staticmethod
    def signature(args):
        """The key of a call's arguments, or None when the call cannot take the lane."""
        sig = [D.get_default_dtype()]
        for a in args:
            if isinstance(a, TensorImpl):
                if a.device.type != "opencl":
                    return None
                sig += (a.device.index, a.dtype, a._shape, a._strides)
            elif type(a) in _LANE_NUMBERS:
                if type(a) is float and math.isnan(a):
                    return None
                # a number is a constant of its prepared launch: -0.0 must not find 0.0's
                sig += (type(a), repr(a) if type(a) is float and not a else a)
            elif type(a) is D.dtype:
                sig.append(a)
            elif type(a) in (list, tuple) and all(type(v) is int for v in a):
                sig += (type(a), tuple(a))              # dims (a reduction's)
            else:
                return None
        return tuple(sig)

    def run(self, sig, operands):
        """The output of a remembered signature's launch, or None if it is new."""
        launch = self.entries.get(sig)
        if launch is None:
            return None
        return launch([v for v in operands if isinstance(v, TensorImpl)])

    def remember(self, sig, rt, out, layout, operands, plan):
        """Keep a slow-path launch on runtime ``rt`` that made the new tensor ``out`` from
        ``operands`` (its ``_Layout`` and argument plan: (source, kernel name, order)) as a
        ``PreparedLaunch`` (Note [Prepared launches]). An empty output (no launch) is not
        kept."""
        if not layout.numel:
            return
        source, name, order = plan
        values = layout.values(rt, operands, out)
        at = {value: arg for arg, value in enumerate(order)}
        places, position = [], 0
        for strides in (*layout.strides, layout.out_tail):
            if strides is None:                 # a number: one value
                position += 1
                continue
            if position not in at or position + 1 not in at:
                return                          # a kernel that reads no buffer of it
            places.append((at[position], at[position + 1]))     # its buffer and its offset
            position += 2 + (0 if strides is layout.out_tail else len(strides))
        if len(self.entries) >= _LANE_SIZE:
            self.entries.clear()
        self.entries[sig] = PreparedLaunch(rt, self.op_name, source, name, layout.numel,
                                           [values[i] for i in order], places, out)

    def remember_launch(self, sig, rt, out, plan, values, positions, global_size,
                        local_size=None):
        """Keep a launch made by ``opencl_pointwise.launch`` (its returned ``plan`` and its
        ``values``) that made ``out``: ``positions`` gives, for each device tensor the lane
        passes (in ``run``'s order) and then ``out``, the index in ``values`` of its buffer
        (its element offset follows)."""
        source, name, order = plan
        at = {value: arg for arg, value in enumerate(order)}
        if any(p not in at or p + 1 not in at for p in positions):
            return                              # a kernel that reads no buffer of one
        places = [(at[p], at[p + 1]) for p in positions]
        if len(self.entries) >= _LANE_SIZE:
            self.entries.clear()
        self.entries[sig] = PreparedLaunch(rt, self.op_name, source, name, global_size,
                                           [values[i] for i in order], places, out,
                                           local_size)


def launch_lane(op_name, fn, context=None):
    """``fn(*args, lane=...)``, an op that makes one new tensor with one ``launch``
    (opencl_pointwise.py) and keeps it with ``PointwiseLane.remember_launch``, with a lane: a
    call whose signature was seen before replays that launch, with no meta function (Note
    [Pointwise lane]). ``context()``: what else the launch depends on (a module setting)."""
    lane = PointwiseLane(op_name)

    def kernel(*args):
        sig = lane.signature(args)
        if sig is not None:
            if context is not None:
                sig = (sig, context())
            out = lane.run(sig, args)
            if out is not None:
                return out
        return fn(*args, lane=None if sig is None else (lane, sig))
    return kernel
