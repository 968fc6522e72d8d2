"""``strata.device``: a device type plus an optional index, parsed like ``torch.device``.

Known types are registered here by the backends ("cpu", "meta", later "sim", "opencl"), and a
user-defined device through ``strata.utils.rename_privateuse1_backend``.
"""

import re

# device type -> name of its backend component in the dispatch key set
_backend_of_type = {"cpu": "CPU", "meta": "Meta", "sim": "Sim"}
# "type" or "type:index" (no sign, no leading zeros), as c10/core/Device.cpp parses it.
_DEVICE_STRING = re.compile(r"^([a-zA-Z_]+)(?::([1-9]\d*|0))?$")
_parsed = {}  # (string, index) -> device: parsing is on the hot path of .to("cpu")
# Types PyTorch programs name that strata knows but cannot run (cuda.is_available() is False).
_KNOWN_UNAVAILABLE = ("cuda", "mps", "xpu", "hip")


def register_device_type(type_name: str, backend: str) -> None:
    """Make ``type_name`` a device string whose tensors dispatch to ``backend``."""
    _backend_of_type[type_name] = backend


NO_CUDA = "Torch not compiled with CUDA enabled"


def no_cuda(*args, **kwargs):
    """What anything that needs a CUDA device does here: PyTorch's CPU-only build raises this
    AssertionError (from ``torch.cuda._lazy_init``) for ``.cuda()``, ``.to("cuda")`` and
    ``device="cuda"`` alike."""
    raise AssertionError(NO_CUDA)


def backend_of(type_name: str) -> str:
    """The backend of a device type (KeyError if no backend runs it; ``no_cuda`` for cuda)."""
    backend = _backend_of_type.get(type_name)
    if backend is None:
        if type_name == "cuda":
            no_cuda()
        raise KeyError(type_name)
    return backend


class device:
    """A device: ``device("cpu")``, ``device("sim:0")``, ``device("sim", 1)``."""

    __slots__ = ("type", "index", "_str")

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not device")
            return type
        cached = _parsed.get((type, index)) if isinstance(type, str) else None
        if cached is not None:
            return cached
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            # a bare index means "the current accelerator", which strata does not have
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type.__class__.__name__}), but expected a device string, a "
                            f"device, or (type, index)")
        if not type:
            raise RuntimeError("Device string must not be empty")
        m = _DEVICE_STRING.match(type)
        if m is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        name, idx = m.groups()
        if idx is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = int(idx)
        if name not in _backend_of_type and name not in _KNOWN_UNAVAILABLE:
            known = ", ".join(sorted(set(_backend_of_type) | set(_KNOWN_UNAVAILABLE)))
            raise RuntimeError(
                f"Expected one of {known} device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self = object.__new__(cls)
        self.type = name
        self.index = index
        self._str = name if index is None else f"{name}:{index}"
        _parsed[type, index if idx is None else None] = self
        return self

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self._str

    def __eq__(self, other):
        # Unlike PyTorch (where device("cpu") == "cpu" is False), a device string compares by
        # what it names: strata code and user code may pass either.
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and self._str == other._str

    def __hash__(self):
        return hash(self._str)

    def __reduce__(self):
        return (device, (self.type, self.index))

    # ``with strata.device("meta"):`` sets the default device of factory functions.
    def __enter__(self):
        _default_device_stack.append(self)
        return self

    def __exit__(self, *exc):
        _default_device_stack.pop()


cpu = device("cpu")
_default_device_stack = []
_global_default_device = [cpu]   # set_default_device; a ``with device(...)`` block overrides it


def default_device() -> device:
    return _default_device_stack[-1] if _default_device_stack else _global_default_device[0]


def set_default_device(d) -> None:
    """The device factory functions use when given none (``None``: back to the CPU)."""
    _global_default_device[0] = cpu if d is None else d if isinstance(d, device) else device(d)


def get_default_device() -> device:
    return default_device()


def as_device(d) -> device:
    """Parse a device argument (None, str, int or device) into a ``device``."""
    if d is None:
        return default_device()
    if isinstance(d, device):
        return d
    return device(d)
