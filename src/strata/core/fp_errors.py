"""NumPy's floating-point error state, switched to "ignore" wherever strata computes.

Note [Silent IEEE arithmetic]: PyTorch computes 1/0 = inf, log(-1) = nan, a float16 overflow =
inf and a nan -> int64 cast without a word. NumPy reports each through its floating-point error
state: a RuntimeWarning by default, an exception under a user's ``warnings.simplefilter("error")``
(pytest -W error) or ``np.seterr(all="raise")``. So strata's NumPy work runs under the "ignore"
state, set in few places: ``cpu_kernel`` (backends/cpu/array.py) around every CPU kernel the
dispatcher calls, ``silent_fp`` around tensor construction from Python data, and
``ignore_fp_errors`` in threads that only run kernels (the CPU pool, the sim device's queues).
The user's own NumPy code keeps its state. NumPy >= 2 keeps the state in a context variable,
set and reset here directly (``np.errstate`` costs 1.4 us, half of a small op); NumPy 1.x keeps
it per thread, set with ``np.seterr``.
"""

import functools

import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar as state
    from numpy._core.umath import _make_extobj
    IGNORE = _make_extobj(all="ignore")
except ImportError:   # NumPy 1.x
    class state:
        @staticmethod
        def set(errors):
            return np.seterr(**errors)

        @staticmethod
        def reset(previous):
            np.seterr(**previous)

    IGNORE = {"all": "ignore"}


def silent_fp(fn):
    """``fn`` run under NumPy's "ignore" state."""
    set_state, reset_state = state.set, state.reset

    @functools.wraps(fn)
    def run(*args, **kwargs):
        token = set_state(IGNORE)
        try:
            return fn(*args, **kwargs)
        finally:
            reset_state(token)
    return run


def ignore_fp_errors():
    """Put the calling thread in the "ignore" state for good (threads that only run kernels)."""
    np.seterr(all="ignore")
