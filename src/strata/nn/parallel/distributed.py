"""``DistributedDataParallel`` (``torch/nn/parallel/distributed.py``): data-parallel training.

    model = DistributedDataParallel(model)        # after dist.init_process_group()
    loss_fn(model(inputs_of_this_rank), targets).backward()   # grads averaged across ranks
    optimizer.step()

Construction checks that every rank has the same parameters and broadcasts rank 0's parameters
and buffers; forward broadcasts buffers again (``broadcast_buffers``); backward averages the
gradients in buckets that communicate while backward runs (reducer.py).
"""

from contextlib import contextmanager

from ...frontend.shape import cat
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...distributed import collectives, objects
from ...distributed.process_group import resolve
from ..modules.module import Module
from .reducer import Reducer, flatten_tensors


class DistributedDataParallel(Module):
    """Replicates ``module`` on every rank and averages its gradients in backward.

    Each rank feeds its own part of the batch. Parameters must be registered in the same order on
    every rank and not be added or removed after wrapping."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None):
        super().__init__()
        if device_ids is not None and any(str(d) != "cpu" for d in device_ids):
            raise ValueError("DistributedDataParallel device_ids and output_device arguments "
                             "only work with single-device/multiple-device GPU modules or CPU "
                             f"modules, but got device_ids {device_ids}, output_device "
                             f"{output_device}, and module parameters on the CPU.")
        if mixed_precision is not None or device_mesh is not None:
            raise NotImplementedError("strata DistributedDataParallel: mixed_precision and "
                                      "device_mesh are not supported")
        params = _unique(p for p in module.parameters() if p.requires_grad)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = resolve(process_group)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.dim = dim
        if init_sync:
            self._verify_params_across_processes(params)
            self._sync_states(list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(params, self.process_group, bucket_cap_mb,
                               find_unused_parameters, gradient_as_bucket_view)

    @property
    def bucket_indices(self):
        """Parameter indices of each gradient bucket, in launch order."""
        return [list(b) for b in self.reducer.bucket_indices]

    def _verify_params_across_processes(self, params):
        shapes = [tuple(p.shape) for p in params]
        everyone = [None] * self.process_group.size()
        objects.all_gather_object(everyone, shapes, group=self.process_group)
        me = self.process_group.rank()
        for rank, theirs in enumerate(everyone):
            if len(theirs) != len(shapes):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {me} has "
                                   f"{len(shapes)} params, while rank {rank} has inconsistent "
                                   f"{len(theirs)} params.")
            for i, (a, b) in enumerate(zip(shapes, theirs)):
                if tuple(a) != tuple(b):
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank {me} "
                                       f"has parameter {i} of shape {list(a)}, while rank "
                                       f"{rank} has shape {list(b)}.")

    def _sync_states(self, tensors):
        """Broadcast ``tensors`` from rank 0, coalesced into one flat tensor per dtype."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with no_grad():
            for group in by_dtype.values():
                flat = cat([t.detach().reshape(-1) for t in group])
                collectives.broadcast(flat, 0, group=self.process_group)
                offset = 0
                for t in group:
                    n = t.numel()
                    t.copy_(flat[offset:offset + n].view(t.shape))
                    offset += n

    def forward(self, *inputs, **kwargs):
        self.reducer.prepare_for_forward()
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers and self.process_group.size() > 1:
            self._sync_states(buffers)
        self.reducer.require_sync = self.require_backward_grad_sync and is_grad_enabled()
        output = self.module(*inputs, **kwargs)
        self.reducer.prepare_for_backward(
            flatten_tensors(output) if self.find_unused_parameters else [])
        return output

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("strata DistributedDataParallel.register_comm_hook: "
                                  "communication hooks are not supported; buckets are always "
                                  "averaged with an all-reduce")

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        raise NotImplementedError("strata DistributedDataParallel.join: uneven inputs are not "
                                  "supported; give every rank the same number of batches "
                                  "(DistributedSampler does)")

    @contextmanager
    def no_sync(self):
        """Accumulate gradients locally (no communication) for the forward and backward passes
        run inside; the first backward after it averages the accumulated sum."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _unique(params):
    seen, out = set(), []
    for p in params:
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out
