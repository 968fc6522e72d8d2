"""The interface every device runtime implements, and what its caching allocator needs from it.

A device backend (``backends/sim``, later ``backends/opencl``) provides:

* ``DeviceMemory``: raw allocation of device memory in big segments, and the stream fences the
  caching allocator checks before it reuses a block another stream may still be reading;
* ``DeviceRuntime``: allocate/free (through a ``CachingAllocator``), launch, copy, synchronize,
  and its streams and events;
* ``Stream`` and ``Event`` with CUDA's semantics (see reference/device.md sections 2-3).

These are the same responsibilities as PyTorch's ``c10::Allocator`` and
``c10::impl::DeviceGuardImplInterface`` (streams, events, ``synchronizeDevice``).
"""

from abc import ABC, abstractmethod


class OutOfDeviceMemory(Exception):
    """Raised by ``DeviceMemory.raw_alloc`` when the device has no room for a segment (the
    allocator then frees its cache and retries before raising ``OutOfMemoryError``)."""


class DeviceMemory(ABC):
    """What a ``CachingAllocator`` needs from a device: segments, and stream progress."""

    capacity: int   # total bytes of device memory

    @abstractmethod
    def raw_alloc(self, nbytes: int):
        """Reserve a segment; return ``(handle, address)``; raise ``OutOfDeviceMemory``."""

    @abstractmethod
    def free_bytes(self) -> int:
        """Bytes of device memory no segment holds (for out-of-memory messages)."""

    @abstractmethod
    def raw_free(self, handle) -> None:
        """Return a segment to the device (only called for segments with no live blocks)."""

    @abstractmethod
    def completed(self, stream: int, seq: int) -> bool:
        """True once the work numbered ``seq`` on ``stream`` has finished."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until every stream has finished its work."""


class Stream(ABC):
    """An in-order queue of work on one device."""

    @abstractmethod
    def query(self) -> bool:
        """True when all work submitted to this stream has completed."""

    @abstractmethod
    def synchronize(self) -> None:
        """Block the host until all work submitted so far has completed."""

    @abstractmethod
    def wait_event(self, event) -> None:
        """Make later work on this stream wait for ``event`` (the host does not block)."""

    def wait_stream(self, stream) -> None:
        """Make later work on this stream wait for the work submitted to ``stream`` so far."""
        self.wait_event(stream.record_event())

    @abstractmethod
    def record_event(self, event=None):
        """Record ``event`` (a new one if None) on this stream and return it."""


class Event(ABC):
    """A marker in a stream: recorded, waited on by streams or the host, timed."""

    @abstractmethod
    def record(self, stream=None) -> None:
        """Enqueue the marker on ``stream`` (the current stream by default)."""

    @abstractmethod
    def query(self) -> bool:
        """True once the marker has been reached (or if it was never recorded)."""

    @abstractmethod
    def synchronize(self) -> None:
        """Block the host until the marker has been reached."""

    @abstractmethod
    def wait(self, stream=None) -> None:
        """Make ``stream`` (the current one by default) wait for the marker."""

    @abstractmethod
    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded with timing)."""


class DeviceRuntime(ABC):
    """One device's runtime: the layer between a backend's kernels and its driver."""

    device_type: str

    @abstractmethod
    def allocate(self, nbytes: int, stream=None):
        """A ``DeviceStorage`` of ``nbytes`` for work on ``stream`` (the current one by
        default), from the caching allocator; it is freed when the storage dies."""

    @abstractmethod
    def empty(self, shape, strides, dtype):
        """A new tensor on the device over a fresh ``allocate``-d storage."""

    @abstractmethod
    def launch(self, op, args, spec):
        """Enqueue ``op`` on the current stream; return its outputs at once (no wait)."""

    @abstractmethod
    def copy(self, dst, src, non_blocking: bool = False) -> None:
        """Copy between host and device, or device and device, on the current stream."""

    @abstractmethod
    def synchronize(self, reason: str = "synchronize") -> None:
        """Wait for every stream of the device."""

    @abstractmethod
    def current_stream(self) -> Stream:
        """The calling thread's current stream."""

    @abstractmethod
    def default_stream(self) -> Stream:
        """The stream work goes to unless a ``with stream(s):`` block says otherwise."""
