"""The Sim kernel of every op that has a CPU kernel, registered under the ``Sim`` key.

A Sim kernel runs on the host and does not compute: it runs the op's meta function (validation,
output shapes and dtypes), and the runtime allocates the outputs and enqueues a launch that the
device executes with *the CPU backend's kernel* over its own memory. It returns at once.

* ``empty``/``empty_strided`` only allocate.
* ``copy_`` and ``_to_copy`` move data between host and device (``runtime.copy``).
* An op whose meta refuses — the output shape depends on the data (``nonzero``,
  ``masked_select``, ``unique``, ...: Note [Data-dependent shapes] in ops/indexing.py) or the
  input is bad — is a sync point: ``runtime.launch_dynamic`` runs the CPU kernel on the device,
  waits, then allocates the outputs (or raises the kernel's error).
* View ops need no kernel here: the shared view kernel (``backends/views.py``) makes views of
  sim storage like any other.
"""

from ... import tensor_conversion
from ...core import dtype as D
from ...core.device import as_device
from ...core.shape import contiguous_strides
from ...core.tensor_impl import TensorImpl
from ...dispatch import register_kernel
from ...ops import factory as F
from ...ops.op import TensorSpec
from ...runtime import OutOfMemoryError
from ..cpu import kernel_table
from . import runtime as R


def _rt():
    return R._runtime or R.get()


def _check_index(device):
    if device is not None:
        d = as_device(device)
        if d.type == "sim" and d.index not in (None, 0):
            raise RuntimeError(f"sim error: invalid device ordinal {d.index}: strata has one "
                               f"sim device, sim:0")


# Note [Meta cache]: a Sim kernel needs its outputs' specs before it can launch, and running a
# meta function in Python costs more than the whole CPU kernel of a small op. For pointwise and
# reduction ops the spec is a pure function of the arguments' metadata (shape, strides, dtype,
# device) and of the Python values passed, so each Sim kernel memoizes it. Other ops' metas may
# read tensor values (a sync) and always run. Only successful results are cached, so a bad
# input still raises every time.
_CACHEABLE = frozenset(("pointwise", "reduction"))
_CACHE_LIMIT = 2048
_SELF = object()   # the cached "spec" of an in-place op: it returns its first argument


def _meta_key(args):
    key = [D.get_default_dtype()]
    for a in args:
        if isinstance(a, TensorImpl):
            key += (a._shape, a._strides or a._get_strides(), a.dtype, a._keyset)
        elif type(a) is list:
            key.append(tuple(a))
        else:
            key += (type(a), a)
    return tuple(key)


def _cached_meta(meta, cache):
    def run(*args):
        try:
            key = _meta_key(args)
            spec = cache.get(key)
        except TypeError:             # an unhashable argument: no caching
            return meta(*args)
        if spec is None:
            spec = meta(*args)
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            if type(spec) is TensorSpec:
                cache[key] = spec
            elif spec is args[0]:
                cache[key] = _SELF
        elif spec is _SELF:
            spec = args[0]
        return spec
    return run


_DEVICE_ERRORS = (R.AsyncKernelError, R.DeviceLost, OutOfMemoryError)


def launch_kernel(op):
    plan = R.plan_for(op)
    meta = _cached_meta(op.meta, {}) if op.tags & _CACHEABLE and plan is None else op.meta

    def kernel(*args):
        if plan is not None:
            for i in plan.devices:
                _check_index(args[i])
        rt = R._runtime or R.get()
        try:
            spec = meta(*args)
        except _DEVICE_ERRORS:
            raise
        except Exception:
            # The output needs values (nonzero, one_hot's class count: the meta refuses) or the
            # input is bad: run the CPU kernel on the device and wait, so data-dependent ops
            # work and errors are the CPU kernel's, raised here as on the CPU.
            return rt.launch_dynamic(op, args, plan)
        return rt.launch(op, args, spec, plan)

    kernel.__name__ = kernel.__qualname__ = f"sim_kernel[{op.name}]"
    return kernel


def alloc_kernel(op):
    """``empty``/``empty_strided``: memory from the caching allocator, no launch."""
    meta = op.meta

    def kernel(*args):
        spec = meta(*args)
        _check_index(args[op.device_position])
        strides = spec.strides if spec.strides is not None else contiguous_strides(spec.shape)
        return _rt().empty(spec.shape, strides, spec.dtype)

    kernel.__name__ = kernel.__qualname__ = f"sim_alloc[{op.name}]"
    return kernel


def copy_(self, src, non_blocking=False):
    """Runs for every copy with a sim side (Sim outranks CPU in the key set)."""
    F.copy_.meta(self, src, non_blocking)
    _rt().copy(self, src, non_blocking)
    return self


def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    """``x.to(...)`` of a sim tensor. A non-blocking copy to the CPU lands in pinned memory and
    returns before the data has arrived, as in PyTorch."""
    spec = F._to_copy.meta(self, dtype, layout, device, pin_memory, non_blocking, memory_format)
    target = self.device if device is None else as_device(device)
    strides = spec.strides if spec.strides is not None else contiguous_strides(spec.shape)
    rt = _rt()
    if target.type == "sim":
        _check_index(target)
        out = rt.empty(spec.shape, strides, spec.dtype)
    elif target.type == "cpu" and (non_blocking or pin_memory):
        out = rt.pinned_empty(spec.shape, strides, spec.dtype)
    else:
        out = F.empty_strided(spec.shape, strides, dtype=spec.dtype, device=target)
        if target.type != "cpu":
            return F.copy_(out, self, non_blocking)
    rt.copy(out, self, non_blocking)
    return out


def resize_(self, size, memory_format=None):
    """Resizing changes the tensor itself, on the host: a bigger storage is a new device
    allocation that the old bytes are copied into (a device-to-device copy)."""
    shape, strides, nbytes = F.resize_layout(self, size, memory_format)
    if nbytes > self._storage.nbytes:
        self._storage = _rt().grow_storage(self._storage, nbytes)
    self._shape, self._strides = shape, strides
    return self


def pin_memory(tensor):
    return _rt().pin(tensor)


def register():
    """Give every op with a CPU kernel a Sim kernel (the device process starts on first use)."""
    for op in kernel_table():
        if "sparse" in op.tags:
            continue   # sparse layouts are CPU-only: the dispatcher names the op and 'Sim'
        if op is F.copy_:
            fn = copy_
        elif op is F.resize_:
            fn = resize_
        elif op is F.empty or op is F.empty_strided:
            fn = alloc_kernel(op)
        else:
            fn = launch_kernel(op)
        register_kernel(op, "Sim", fn)
    register_kernel(F._to_copy, "Sim", _to_copy)
    tensor_conversion.install_pin_memory(pin_memory)
