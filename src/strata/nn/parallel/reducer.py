"""DDP's gradient reducer (``torch/csrc/distributed/c10d/reducer.cpp``), in Python.

Parameters are packed, in reverse registration order (the order their gradients become ready in
backward), into flat per-dtype buckets of at most ``bucket_cap_mb``; the first bucket is capped at
1 MiB when the cap is left at its default, so communication starts early. A post-accumulate-grad
hook on every parameter copies its gradient into its bucket, divided by the world size on the way
("divides while copying to save one scan"). When a bucket's last gradient arrives, the hook starts
the bucket's all-reduce (a SUM, which yields the mean) as a nonblocking MPI request on DDP's own
communicator, strictly in bucket order so that every rank issues the same all-reduces in the
same order, and every later hook tests the requests in flight, which is when MPICH moves their
data (Note [Requests on the caller's thread] in distributed/work.py). The hook that launches the
last bucket waits for all of them and writes the averaged gradients back into ``param.grad`` (or,
with ``gradient_as_bucket_view``, the gradients already are views of the buckets).
"""

import numpy as np

from ... import creation
from ...autograd.graph import AccumulateGrad
from ...distributed.buffers import HostBuffer, ReduceOp
from ...distributed.collectives import all_reduce_flat
from ...tensor_new import from_numpy

DEFAULT_FIRST_BUCKET_BYTES = 1 << 20


def assign_buckets(params, cap_bytes, first_cap_bytes):
    """Lists of parameter indices, bucket 0 first; parameters are taken last-defined first and
    a bucket closes once it holds at least its cap (per dtype, as PyTorch's)."""
    buckets, open_by_dtype = [], {}
    for index in reversed(range(len(params))):
        p = params[index]
        entry = open_by_dtype.get(p.dtype)
        if entry is None:
            entry = open_by_dtype[p.dtype] = [[], 0]
        entry[0].append(index)
        entry[1] += p.numel() * p.dtype.itemsize
        limit = first_cap_bytes if not buckets else cap_bytes
        if entry[1] >= limit:
            buckets.append(entry[0])
            del open_by_dtype[p.dtype]
    buckets.extend(entry[0] for entry in open_by_dtype.values() if entry[0])
    return buckets


class Bucket:
    """One flat buffer of several parameters' gradients."""

    def __init__(self, index, param_indices, params):
        self.index = index
        self.param_indices = param_indices
        self.dtype = params[param_indices[0]].dtype
        self.offsets = {}
        total = 0
        for i in param_indices:
            self.offsets[i] = (total, total + params[i].numel())
            total += params[i].numel()
        self.flat = creation.zeros(total, dtype=self.dtype)
        self.array = self.flat.numpy()
        self.pending = len(param_indices)
        self.work = None

    def view(self, i, shape):
        start, stop = self.offsets[i]
        return self.flat[start:stop].view(shape)

    def slice(self, i):
        start, stop = self.offsets[i]
        return self.array[start:stop]


class Reducer:
    """Averages the gradients of ``params`` across ``process_group`` during backward."""

    def __init__(self, params, process_group, bucket_cap_mb, find_unused_parameters,
                 gradient_as_bucket_view):
        self.params = params
        self.pg = process_group
        self.comm = process_group.dup_comm()   # only this reducer's all-reduces run on it
        self.world = process_group.size()
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * (1 << 20))
        first = DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap
        self.bucket_indices = assign_buckets(params, cap, first)
        self.buckets = [Bucket(b, idx, params) for b, idx in enumerate(self.bucket_indices)]
        self.bucket_of = {i: b for b in self.buckets for i in b.param_indices}
        self.require_sync = True
        self._ready = [False] * len(params)
        self._used = np.zeros(len(params), np.int32)
        self._next_bucket = 0
        self._oldest_in_flight = 0
        self._expecting = False     # a backward with sync started and has not finished
        self._hooks = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                       for i, p in enumerate(params)]

    def _hook_for(self, index):
        def hook(param):
            if self.require_sync:
                self._mark_ready(index)
        return hook

    # --- per iteration ----------------------------------------------------------------------
    def prepare_for_forward(self):
        if self._expecting:
            missing = [i for i, ready in enumerate(self._ready) if not ready]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to `strata.nn.parallel."
                "DistributedDataParallel`, and by making sure all `forward` function outputs "
                "participate in calculating loss.\nParameter indices which did not receive "
                f"grad for rank {self.pg.rank()}: {' '.join(map(str, missing))}")

    def prepare_for_backward(self, outputs):
        """Reset the counts; with ``find_unused_parameters``, mark parameters the outputs do not
        reach as ready now (their slice is zero)."""
        self._ready = [False] * len(self.params)
        self._used[:] = 0
        self._next_bucket = 0
        self._oldest_in_flight = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.param_indices)
            bucket.work = None
        if not self.require_sync:
            return
        if self.find_unused_parameters:
            reached = _reachable_params(outputs)
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    self._mark_ready(i, unused=True)

    def _mark_ready(self, index, unused=False):
        if self._ready[index]:
            raise RuntimeError(f"Expected to mark a variable ready only once. This error is "
                               f"caused by parameter index {index} being used twice in backward "
                               f"with DDP (e.g. reentrant checkpointing or a parameter shared "
                               f"by several modules and marked twice).")
        self._ready[index] = True
        self._expecting = True
        self._progress()
        bucket = self.bucket_of[index]
        param = self.params[index]
        grad = None if unused else param.grad
        target = bucket.slice(index)
        if grad is None:
            target[...] = 0
        else:
            self._used[index] = 1
            self._copy_in(bucket, index, param, grad, target)
        bucket.pending -= 1
        while (self._next_bucket < len(self.buckets)
               and self.buckets[self._next_bucket].pending == 0):
            ready = self.buckets[self._next_bucket]
            ready.work = all_reduce_flat(self.pg, self.comm, ready.array, ready.dtype,
                                         ReduceOp.SUM, bucket=ready.index,
                                         params=len(ready.param_indices))
            self._next_bucket += 1
        if self._next_bucket == len(self.buckets):
            self._finalize()

    def _progress(self):
        """Test the oldest all-reduce in flight: any MPI call advances all of them."""
        while self._oldest_in_flight < self._next_bucket:
            if not self.buckets[self._oldest_in_flight].work.progress():
                return
            self._oldest_in_flight += 1

    def _copy_in(self, bucket, index, param, grad, target):
        scale = 1.0 / self.world
        if self.gradient_as_bucket_view:
            view = bucket.view(index, param.shape)
            if grad.data_ptr() != view.data_ptr():
                np.multiply(HostBuffer(grad).array, scale, out=target, casting="unsafe")
                param.grad = view
            else:
                np.multiply(target, scale, out=target, casting="unsafe")
            return
        np.multiply(HostBuffer(grad).array, scale, out=target, casting="unsafe")

    def _finalize(self):
        for bucket in self.buckets:
            bucket.work.wait()
        globally_used = self._used
        if self.find_unused_parameters:
            globally_used = self._used.copy()
            all_reduce_flat(self.pg, self.comm, globally_used, None, ReduceOp.MAX,
                            what="unused-parameter map").wait()
        for index, param in enumerate(self.params):
            if not globally_used[index]:
                continue   # no rank produced a gradient: leave .grad as it was
            bucket = self.bucket_of[index]
            if self.gradient_as_bucket_view:
                if param.grad is None or param.grad.data_ptr() != \
                        bucket.view(index, param.shape).data_ptr():
                    param.grad = bucket.view(index, param.shape)
                continue
            if param.grad is None:
                param.grad = from_numpy(bucket.slice(index).copy()).view(param.shape)
                continue
            out = HostBuffer(param.grad)
            out.array[...] = bucket.slice(index)
            out.write_back()
        self._expecting = False

    def remove_hooks(self):
        for handle in self._hooks:
            handle.remove()


def _reachable_params(outputs):
    """ids of the leaf tensors whose AccumulateGrad the outputs' graph reaches."""
    seen, found = set(), set()
    stack = [t.grad_fn for t in outputs if getattr(t, "grad_fn", None) is not None]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad):
            found.add(id(node.variable))
            continue
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return found


def flatten_tensors(value):
    """Every tensor in a (possibly nested) forward output."""
    if hasattr(value, "grad_fn"):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flatten_tensors(v)]
    return []

