"""Random number generation: ``Generator``, ``manual_seed``, RNG state and ``fork_rng``.

A ``Generator`` wraps a NumPy ``Generator`` (PCG64). Streams are reproducible: the same seed gives
the same numbers in strata on every run, but not the same numbers as PyTorch's MT19937 (tests
compare distributions and determinism, not values). Like PyTorch, the default generator starts
from a fixed seed, so an unseeded program is deterministic too. Random kernels draw from
``generator_for(generator)``: the given generator, else the default one.
"""

import contextlib
import json
import operator

import numpy as np

from .core.device import as_device

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed (c10/core/GeneratorImpl.h)
_U64 = 2 ** 64


def _seed_value(seed) -> int:
    """A seed as PyTorch's ``manual_seed`` takes it: an int in [-2**63, 2**64), negatives wrapped
    modulo 2**64."""
    try:
        seed = operator.index(seed)
    except TypeError:
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}") \
            from None
    if not -2 ** 63 <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


class Generator:
    """A source of random numbers for one device.

        >>> g = strata.Generator().manual_seed(0)
        >>> strata.rand(2, generator=g).shape
        strata.Size([2])
    """

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        if self.device.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed):
        """Restart the stream from ``seed``; returns the generator."""
        self._seed = _seed_value(seed)
        self.bit_generator = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        """Reseed from OS entropy; returns the new (non-deterministic) seed."""
        seed = int(np.random.SeedSequence().entropy % _U64)
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        """The seed the stream last started from."""
        return self._seed

    def get_state(self):
        """The full state as a uint8 tensor (for ``set_state``)."""
        from .core import dtype as D
        from .tensor_new import tensor
        state = {"seed": self._seed, "bit_generator": self.bit_generator.bit_generator.state}
        return tensor(list(json.dumps(state).encode()), dtype=D.uint8)

    def set_state(self, new_state):
        """Restore a state from ``get_state``."""
        from .core import dtype as D
        from .core.tensor_impl import TensorImpl
        if not isinstance(new_state, TensorImpl):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        try:
            state = json.loads(bytes(new_state.tolist()).decode())
            bit_state = state["bit_generator"]
            generator = np.random.Generator(np.random.PCG64())
            generator.bit_generator.state = bit_state
        except (ValueError, KeyError, TypeError):
            raise RuntimeError(f"Expected an RNG state from Generator.get_state() but got "
                               f"{new_state.numel()} bytes that are not one") from None
        self._seed = int(state["seed"])
        self.bit_generator = generator
        return self

    def __repr__(self):
        return f"<strata.Generator object (device={self.device})>"


default_generator = Generator()


def generator_for(generator):
    """The NumPy generator a random kernel should draw from."""
    if generator is None:
        return default_generator.bit_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator: expected a strata.Generator, got "
                        f"{type(generator).__name__}")
    return generator.bit_generator


def manual_seed(seed):
    """Seed the default generator: ``strata.manual_seed(0)``; returns it.

    ``seed`` may be anything ``int()`` accepts (``1.5``, ``"3"``, a 0-dim tensor), like PyTorch.
    """
    return default_generator.manual_seed(_seed_value(int(seed)))


def seed():
    """Seed the default generator from OS entropy and return the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cpu"):
    """Run a block with the default generator's state saved and restored afterwards.

        >>> with strata.random.fork_rng():
        ...     strata.manual_seed(1); _ = strata.rand(3)

    ``devices`` and ``device_type`` are PyTorch's accelerator selectors; strata's one default
    generator serves every device, so its state is what is forked.
    """
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
