"""Device-side asserts: index checks that report at the next sync point, as CUDA's do.

Note [Device-side asserts]: ``embedding``, ``index_select``, ``index_add_`` and ``nll_loss``
must raise PyTorch's error for an index out of range. Reading the indices on the host to check
them would make every training step wait for the device (a sync point per op). Instead a check
kernel (compile/inductor/opencl_checks.py) runs on the device before the op's kernel and, where
it finds a bad index, writes it into a small flag buffer of the runtime: one slot per kind of
error (the error's text with the index left out: "Target {} is out of bounds."). The op's
kernels clamp what they read, so a bad index never reads outside its buffer. A stream's next
sync point (``synchronize()``, a copy to the host: ``.cpu()``, ``.item()``) reads the flags
of the checks it ran and raises the first error found, with the bad index in its text: the
error surfaces there, not at the op, as a CUDA device-side assert surfaces at the next
synchronising call. ``STRATA_LAUNCH_BLOCKING=1`` synchronises after every launch, so the error
is raised at the op, as ``CUDA_LAUNCH_BLOCKING=1`` makes it. After an error is raised the
flags are cleared and the device stays usable (CUDA's context would not). A graph recorded for
replay (graphs.py) keeps the slots its checks wrote, and each replay expects them again on its
stream, so a bad index in a replayed graph raises at the next sync point as well.
"""

import numpy as np

SLOTS = 64      # kinds of error the buffer holds at once; past that, checks run on the host


class DeviceAsserts:
    """The flag buffer of one runtime: ``int64[2 * SLOTS]``, per slot (found, bad index)."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.buffer = None          # the cl.Buffer, made on first use
        self._slots = {}            # (error type, text) -> slot
        self._errors = {}           # slot -> fn(bad index) -> the exception to raise
        self._waiting = {}          # slot -> ids of streams whose checks were not read yet

    def slot(self, key, make_error, stream):
        """The slot for the errors ``key`` of a check launched now on ``stream``, or None when
        every slot is taken (the caller checks on the host instead)."""
        slot = self._slots.get(key)
        if slot is None:
            if len(self._slots) >= SLOTS:
                return None
            slot = self._slots[key] = len(self._slots)
            self._errors[slot] = make_error
        if self.buffer is None:
            self.buffer = self._zeroed(self.runtime.current_stream())
        self.expect(slot, stream)
        if self.runtime.recording is not None:
            self.runtime.recording.checked(slot)
        return slot

    def expect(self, slot, stream):
        """Read ``slot`` at ``stream``'s next sync point: a check of it was enqueued there
        (launched now, or replayed by a recorded graph: graphs.py)."""
        self._waiting.setdefault(slot, set()).add(stream.id)

    def _zeroed(self, stream):
        from .runtime import cl
        pycl = cl()
        flags = np.zeros(2 * SLOTS, np.int64)
        buffer = pycl.Buffer(self.runtime.context, pycl.mem_flags.READ_WRITE, flags.nbytes)
        stream.enqueued(pycl.enqueue_copy(stream.queue, buffer, flags, is_blocking=True))
        return buffer

    def check(self, stream):
        """Raise the first error the checks ``stream`` ran have flagged (its queue has finished
        them: a sync point)."""
        slots = [slot for slot, ids in self._waiting.items() if stream.id in ids]
        if not slots:
            return
        from .runtime import cl
        pycl = cl()
        flags = np.empty(2 * SLOTS, np.int64)
        stream.enqueued(pycl.enqueue_copy(stream.queue, flags, self.buffer, is_blocking=True))
        for slot in slots:
            ids = self._waiting[slot]
            ids.discard(stream.id)
            if not ids:
                del self._waiting[slot]
        found = [slot for slot in slots if flags[2 * slot]]
        if found:
            bad = int(flags[2 * found[0] + 1])
            flags[:] = 0
            stream.enqueued(pycl.enqueue_copy(stream.queue, self.buffer, flags,
                                              is_blocking=True))
            self._waiting.clear()
            raise self._errors[found[0]](bad)
