"""A CPU group's whole update in one generated C call (Note [One update kernel]), its plan kept
between steps (Note [Cached update plan]): ``AdamUpdate`` (Adam, AdamW) and ``SGDUpdate``
(SGD with momentum). The arithmetic is compile/inductor/eager_optim.py's per-parameter
kernels', so the numbers are the op path's bit for bit; what qualifies is
optim/_native_update.py's ``_arrays`` and ``_unobserved``.
"""

from operator import attrgetter, is_, itemgetter

import numpy as np

from ..backends.cpu import native, native_pool
from ..backends.cpu.array import data
from ._native_update import _arrays, _unobserved

# Note [One update kernel]: an optimizer's update of every parameter of a group as one C call
# over all their elements back to back (``<update>_multi_step`` in
# compile/inductor/eager_optim.py), split over the pool in chunks of MULTI_GRAIN elements. The
# for-loop ran one kernel per large parameter, each too small to split, and the flat path
# concatenated the small ones' gradients and parameters and copied them back: serial time on
# the caller's thread (benchmarks.compile_profile --amdahl: 1.2 ms of an MLP step, 2.2 ms of a
# tiny GPT's; SGD's flat path 0.45 of the CNN step's ~6 ms, the one call 0.05). It runs where
# every parameter qualifies as for the per-parameter kernel and, for Adam, all share one step
# count (so one bias correction is every parameter's own).
_ARRAY, _COUNTER = attrgetter("_array"), attrgetter("_vc")
MULTI_GRAIN = 1 << 15    # ~30 us of an Adam update: worth handing to a thread


# Note [Cached update plan]: working out a group's update (which tensors qualify, their arrays,
# the kernel's tables of their addresses) is most of ``opt.step()``'s Python: ~65 of ~95 us of
# the MLP step's Adam over six parameters (benchmarks.compile_profile; docs/performance.md,
# "The MLP step's floor"). So a group's plan is kept between steps (``_grouped_step``) and
# reused while it still describes the group: the same parameter and state tensors (identity),
# each with the same array and version counter (``.data =``, ``set_``, ``resize_``,
# ``share_memory_`` give a tensor a new array). A replaced parameter, a loaded state dict or a
# state tensor put in by hand fails that check, and the group is planned afresh. What may
# change at every step is checked at every step: the gradients (new tensors after
# ``zero_grad()``: their device, dtype, layout and size, and their addresses, written into the
# plan's gradient table), the step counts (still all equal), the modes (``_unobserved``) and
# the hyperparameters, which the plan does not hold: ``run`` takes them from the group.
class GroupUpdate:
    """A group's update through one kernel, checked. A subclass names its kernel, its state
    tensors (in the kernel's order, after the parameter and the gradient) and how many in-place
    ops the op path runs on each state tensor (their version counts)."""

    kernel = ""              # eager_optim.py's ``<kernel>_multi_step_<dtype>``
    state_names = ()
    state_bumps = ()
    scalar_count = 0

    def __init__(self, fn, params, states, columns):
        self.fn, self.params = fn, params
        self.states = [tuple(s[name] for name in self.state_names) for s in states]
        self.dtype, self.sizes = columns[0][0].dtype, [c[0].size for c in columns]
        written = [t for p, kept in zip(params, self.states) for t in (p, *kept)]
        # what the plan relies on, by identity (Note [Cached update plan])
        self._hold(written)
        self.by_state = [[kept[k] for kept in self.states] for k in range(len(self.state_names))]
        # one count per counter: the flat path's state tensors are views of one buffer and
        # share theirs (optim/_multi_tensor.py), which its ops move once per step
        self.param_versions = list({id(c): c for c in (p._version_counter()
                                                        for p in params)}.values())
        self.state_versions = list({id(c): (c, bump) for kept in self.states
                                    for c, bump in ((t._version_counter(), bump) for t, bump
                                                    in zip(kept, self.state_bumps))}.values())
        # the kernel's tables: each column's addresses (the gradients' rewritten at each
        # step), where each parameter starts, and the scalars
        self.pointers = [np.array([c[k].ctypes.data for c in columns], np.uintp)
                         for k in range(len(columns[0]))]
        self.offsets = np.zeros(len(columns) + 1, np.int64)
        np.cumsum(self.sizes, out=self.offsets[1:])
        self.scalars = np.empty(self.scalar_count, self.dtype)
        self.tables = [t.ctypes.data for t in self.pointers] + [
            self.offsets.ctypes.data, len(columns), self.scalars.ctypes.data]

    @classmethod
    def _qualifies(cls, states):
        """More a subclass requires of the states (Adam: its step counts)."""
        return True

    @classmethod
    def plan(cls, params, grads, states, *scalars):
        """The update of these parameters, or None where the per-parameter or flat path must
        run (a tensor that does not qualify: Note [One update kernel])."""
        tensors = [t for p, g, s in zip(params, grads, states)
                   for t in (p, g, *(s[name] for name in cls.state_names))]
        if not _unobserved(tensors, *scalars) or not cls._qualifies(states):
            return None
        width = 2 + len(cls.state_names)
        columns = [_arrays(tensors[i:i + width]) for i in range(0, len(tensors), width)]
        if any(c is None or c[0].dtype != columns[0][0].dtype for c in columns):
            return None
        fn = native.function("eager_optim", f"{cls.kernel}_multi_step_{columns[0][0].dtype.name}")
        return None if fn is None else cls(fn, params, states, columns)

    @classmethod
    def reuse_or_plan(cls, cached, params, grads, states, *scalars):
        """``cached`` (a plan of this group from an earlier step) pointed at this step's
        ``grads`` where it still holds (Note [Cached update plan]), else ``plan``'s answer."""
        if cached is not None and cached._holds(params, states) and \
                _unobserved(grads, *scalars) and cached._take_grads(grads):
            return cached
        return cls.plan(params, grads, states, *scalars)

    def _holds(self, params, states):
        # (map and operator.is_ iterate in C: ~3 us for a tiny GPT's 30 parameters, where
        # generator expressions took ~40)
        if len(params) != len(self.params) or not all(map(is_, params, self.params)):
            return False
        for name, mine in zip(self.state_names, self.by_state):
            if not all(map(is_, map(itemgetter(name), states), mine)):
                return False
        return all(map(is_, map(_ARRAY, self.held), self.held_arrays)) and \
            all(map(is_, map(_COUNTER, self.held), self.held_counters))

    def _hold(self, tensors):
        """Add ``tensors`` to what the plan relies on: each by identity, with its array and
        version counter as they are now."""
        self.held = getattr(self, "held", ()) + tuple(tensors)
        self.held_arrays = tuple(data(t) for t in self.held)
        self.held_counters = tuple(t._version_counter() for t in self.held)

    def _take_grads(self, grads):
        """Write ``grads``' addresses into the gradient table; False (the table unchanged) where
        one does not qualify as ``_arrays`` requires."""
        addresses = []
        for g, size in zip(grads, self.sizes):
            if g.device.type != "cpu" or g.is_sparse:
                return False
            a = data(g)
            if a.dtype != self.dtype or a.size != size or not a.flags.c_contiguous:
                return False
            addresses.append(native.pointer(a))
        self.pointers[1][:] = addresses
        return True

    def _launch(self, scalars, flag, param_bumps):
        """One parallel call over every element, then the versions the ops would move."""
        self.scalars[:] = scalars      # (converted to the dtype as the ops convert a number)
        native_pool.parallel_call(self.fn, self.tables + [flag], 0, int(self.offsets[-1]),
                                  MULTI_GRAIN)
        for version in self.param_versions:
            version.value += param_bumps
        for version, bump in self.state_versions:
            version.value += bump


class AdamUpdate(GroupUpdate):
    """Adam's and AdamW's group update: ``count_step``, then ``run`` (the caller computes the
    bias corrections between them, from the new step count)."""

    kernel = "adam"
    state_names = ("exp_avg", "exp_avg_sq")
    state_bumps = (1, 2)        # lerp_; mul_ and addcmul_ (the gradient is only read)
    scalar_count = 7

    def __init__(self, fn, params, states, columns):
        super().__init__(fn, params, states, columns)
        steps = [s["step"] for s in states]
        self.steps = steps
        self.step_arrays = [step._array for step in steps]
        self._hold(steps)
        self.step_versions = [step._version_counter() for step in steps]

    @classmethod
    def _qualifies(cls, states):
        steps = [s["step"] for s in states]
        if not _unobserved(steps):
            return False
        arrays = [t._array if t.device.type == "cpu" else None for t in steps]
        return not any(a is None or a.ndim or a.dtype not in native.GENERATED_DTYPES
                       for a in arrays) and _equal_and_writeable(arrays)

    def _holds(self, params, states):
        return all(map(is_, map(itemgetter("step"), states), self.steps)) and \
            super()._holds(params, states) and _equal_and_writeable(self.step_arrays)

    def count_step(self):
        """``state['step'] += 1`` for every parameter, its version moved as ``add_`` moves it
        (the plan holds only float 0-dim CPU step counts, all equal: the sum of the first,
        exact in a Python float, rounds to each count's dtype as ``add_`` rounds it; ``fill``
        costs 0.13 us a count where ``+= 1`` took 1.3)."""
        value = float(self.step_arrays[0]) + 1
        for array in self.step_arrays:
            array.fill(value)
        for version in self.step_versions:
            version.value += 1

    def run(self, lerp_weight, beta2, bias_correction2_sqrt, eps, step_size, decay=None):
        """The update, ``param.mul_(decay)`` first when ``decay`` is given (AdamW)."""
        self._launch((lerp_weight, beta2, 1 - beta2, bias_correction2_sqrt, eps, -step_size,
                      1 if decay is None else decay), int(decay is not None),
                     1 + (decay is not None))     # (mul_ and) addcdiv_


class SGDUpdate(GroupUpdate):
    """SGD's group update once every momentum buffer exists (the first step makes them)."""

    kernel = "sgd_momentum"
    state_names = ("momentum_buffer",)
    state_bumps = (2,)          # mul_ and add_
    scalar_count = 3

    def run(self, momentum, dampening, lr, nesterov):
        self._launch((momentum, 1 - dampening, -lr), int(bool(nesterov)), 1)   # add_


def _equal_and_writeable(step_arrays):
    """The step counts (0-dim arrays) are all equal and can be counted in place."""
    return all(a.flags.writeable for a in step_arrays) and \
        len({float(a) for a in step_arrays}) == 1
