"""Random number generation: ``Generator``, ``manual_seed`` and the default generator.

A ``Generator`` wraps a NumPy ``Generator`` (PCG64). Streams are reproducible: the same seed gives
the same numbers in strata on every run, but not the same numbers as PyTorch's MT19937 (tests
compare distributions and determinism, not values). Like PyTorch, the default generator starts
from a fixed seed, so an unseeded program is deterministic too.
"""

import json

import numpy as np

from .core.device import as_device

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed (c10/core/GeneratorImpl.h)


class Generator:
    """A source of random numbers for one device: ``g = strata.Generator().manual_seed(0)``."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._seed = DEFAULT_SEED
        self.bit_generator = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed += 2 ** 64
        self._seed = seed
        self.bit_generator = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from .creation import tensor
        from .core import dtype as D
        state = json.dumps(self.bit_generator.bit_generator.state).encode()
        return tensor(list(state), dtype=D.uint8)

    def set_state(self, new_state):
        state = json.loads(bytes(new_state.tolist()).decode())
        self.bit_generator.bit_generator.state = state
        return self

    def __repr__(self):
        return f"<strata.Generator object (device={self.device})>"


default_generator = Generator()


def generator_for(generator):
    """The NumPy generator a random kernel should draw from."""
    return (generator or default_generator).bit_generator


def manual_seed(seed):
    """Seed the default generator (and every device's): ``strata.manual_seed(0)``."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
