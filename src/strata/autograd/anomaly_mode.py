"""Anomaly detection (``torch/autograd/anomaly_mode.py``): a debugging mode.

While on, every recorded node keeps the Python stack of the forward call that made it; when its
backward fails, the engine warns with that stack before re-raising. With ``check_nan``, a node
whose backward returns NaN raises ``Function 'DivBackward0' returned nan values in its 0th
output.``

    >>> with strata.autograd.detect_anomaly():
    ...     loss.backward()
"""

import os
import threading
import traceback
import warnings

from ..ops import pointwise as P
from ..ops import reductions as RD


class _AnomalyState(threading.local):
    enabled = False
    check_nan = True


_state = _AnomalyState()
# Has any thread ever turned anomaly mode on? Until then every recorded op skips the
# thread-local read (one attribute of a ``threading.local`` costs about an op's tenth).
ever_enabled = False


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# What PyTorch runs in C++ (its traces never show it): the Tensor class and frontends, the
# dispatcher, ops and their decompositions, autograd, kernels; and generated code.
_MACHINERY = tuple(_PACKAGE + part for part in (
    "_tensor.py", "tensor_operators.py", "tensor_methods.py", "tensor_conversion.py",
    "functions.py", "creation.py", "frontend" + os.sep, "dispatch" + os.sep, "ops" + os.sep,
    "autograd" + os.sep, "backends" + os.sep, "core" + os.sep)) + ("<generated ",)
# ``strata run script.py``'s own frames, above the script's (``python script.py`` has none)
_RUNNER = ("<frozen runpy>", _PACKAGE + "__main__.py", _PACKAGE + "cli.py")


def forward_stack() -> list:
    """The Python stack of the forward call being recorded, up to the line that called the op
    (a user's line, or a Python library frame such as ``Linear.forward``): the machinery's
    frames after it are left out, however many the path took."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_MACHINERY):
        frames.pop()
    first = 0
    while first < len(frames) - 1 and frames[first].filename in _RUNNER:
        first += 1
    return traceback.format_list(frames[first:])


def _set_enabled(mode: bool):
    global ever_enabled
    _state.enabled = mode
    ever_enabled = ever_enabled or mode


def is_anomaly_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


def _warn_enabled():
    warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                  "should only be enabled for debugging.", UserWarning, stacklevel=3)


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = _state.enabled
        self.prev_check_nan = _state.check_nan
        _warn_enabled()

    def __enter__(self):
        _set_enabled(True)
        _state.check_nan = self.check_nan

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        _state.check_nan = self.prev_check_nan

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns anomaly detection on at once (also usable in ``with``,
    which restores the previous setting)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = _state.enabled
        self.prev_check_nan = _state.check_nan
        _set_enabled(bool(mode))
        _state.check_nan = bool(check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        _state.check_nan = self.prev_check_nan


def check_nan(node, outputs):
    """Raise if a backward output holds NaN (``validate_outputs`` under anomaly mode)."""
    for i, g in enumerate(outputs):
        if g is not None and RD.sum(P.isnan(g)).item():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.")
