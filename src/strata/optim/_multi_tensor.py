"""The multi-tensor (``foreach=True``) path: one flat buffer per (device, dtype) bucket.

PyTorch's foreach path calls ``_foreach_*`` kernels that take lists of tensors, so an update costs
a handful of dispatcher calls instead of a handful *per parameter*. strata gets the same effect
with ordinary strata ops: the per-parameter optimizer state (``exp_avg``, ``step``, ...) lives as
views of one flat buffer per bucket, gradients are concatenated into one flat tensor, and the
update math runs once on the flat tensors. Only the final write into each parameter is per
parameter. The math is the same elementwise ops as the for-loop path, so the numbers are identical.

Tensors larger than ``FLATTEN_MAX_NUMEL`` are updated one by one, with the same math.

The state stays PyTorch-shaped: ``optimizer.state[p]['exp_avg']`` is a tensor of ``p``'s shape
(a view of the bucket's buffer). When the state is replaced (``load_state_dict``) or the set of
parameters with a gradient changes, the bucket is rebuilt from the current state tensors.
"""

from ..ops import shape as S
from ..ops import split_join as SJ


# Flattening pays for itself when per-op overhead dominates (many small tensors). A big tensor
# already amortises that overhead, and copying it into a flat buffer only adds memory traffic
# (and large temporaries, which NumPy pays for in page faults), so it keeps its own tensors.
FLATTEN_MAX_NUMEL = 1 << 16


def plan(params, grads, states):
    """Split the work: per (device, dtype) bucket, the small tensors to flatten, as
    ``{key: (params, grads, states)}``, and the large ones as one ``(params, grads, states)``."""
    buckets, large = {}, ([], [], [])
    for i, p in enumerate(params):
        target = large if p.numel() > FLATTEN_MAX_NUMEL else \
            buckets.setdefault((p.device, p.dtype), ([], [], []))
        target[0].append(p)
        target[1].append(grads[i])
        target[2].append(states[i])
    return buckets, large


def flatten(tensors):
    """One fresh 1-D tensor holding ``tensors`` back to back."""
    return S.cat([S.reshape(t, (t.numel(),)) for t in tensors])


class FlatBucket:
    """Parameters of one bucket, their flat views, and their state as views of flat buffers.

    It reads like one parameter's state dict (``bucket['exp_avg']`` is the flat buffer, and
    ``bucket['momentum_buffer'] = flat`` makes ``flat`` every parameter's buffer), so an
    optimizer's update runs unchanged on a parameter or on a whole bucket."""

    __slots__ = ("params", "numels", "param_views", "states", "scalar_names", "state_views",
                 "flats")

    def __init__(self, params, states, names, scalar_names):
        self.params = list(params)
        self.numels = [p.numel() for p in params]
        # A contiguous parameter is written through a cached 1-D view of itself.
        self.param_views = [S.view(p, (p.numel(),)) if p.is_contiguous() else None for p in params]
        self.states = states
        self.scalar_names = scalar_names
        self.flats = {}
        self.state_views = {}
        for name in names:
            self[name] = flatten([s[name] for s in states])

    def __getitem__(self, name):
        return self.flats[name]

    def __setitem__(self, name, flat):
        """Make ``flat`` the buffer of state ``name``: each state entry becomes a view of it."""
        if name in self.scalar_names:
            views = SJ.unbind(flat, 0)
        else:
            views = [S.view(v, p._shape) for v, p in
                     zip(SJ.split_with_sizes(flat, self.numels), self.params)]
        for s, v in zip(self.states, views):
            s[name] = v
        self.flats[name] = flat
        self.state_views[name] = views

    def __contains__(self, name):
        return name in self.flats

    def get(self, name, default=None):
        return self.flats.get(name, default)

    def matches(self, params, states, names):
        """Still valid: same parameters, same storage, and the state still is our views."""
        if len(params) != len(self.params) or names != tuple(self.flats):
            return False
        for i, (p, mine) in enumerate(zip(params, self.params)):
            view = self.param_views[i]
            if p is not mine or (view is not None and view._storage is not p._storage):
                return False
        return all(states[i][name] is views[i] for name, views in self.state_views.items()
                   for i in range(len(params)))

    def uniform(self):
        """Every scalar state (``step``, ...) is the same for all parameters: the bucket can take
        one update with one bias correction."""
        for name in self.scalar_names:
            if name in self.flats:
                values = self.flats[name].tolist()
                if any(v != values[0] for v in values):
                    return False
        return True

    def flat_params(self):
        return S.cat([v if v is not None else S.reshape(p, (p.numel(),))
                      for p, v in zip(self.params, self.param_views)])

    def copy_to_params(self, flat_values):
        for p, view, v in zip(self.params, self.param_views,
                              SJ.split_with_sizes(flat_values, self.numels)):
            if view is not None:
                view.copy_(v)
            else:
                p.copy_(S.view(v, p._shape))


def get_bucket(cache, key, params, states, scalar_names):
    """The cached bucket for ``key`` if it still matches, else a rebuilt one."""
    names = tuple(states[0])
    bucket = cache.get(key)
    if bucket is None or not bucket.matches(params, states, names):
        bucket = cache[key] = FlatBucket(params, states, names, scalar_names)
    bucket.states = states
    return bucket
