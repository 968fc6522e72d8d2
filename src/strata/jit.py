"""``strata.jit``: what model code calls around TorchScript, without TorchScript.

Libraries guard code with ``torch.jit.is_scripting()``/``is_tracing()`` and mark methods with
``@torch.jit.ignore``/``unused``/``export``: those behave as in eager PyTorch (False, and
decorators that change nothing). Compiling to TorchScript (``script``, ``trace``, ``save``,
``load``, ...) is not built: each raises NotImplementedError naming itself; ``strata.compile``
is the compiler (PyTorch 2.13 deprecates TorchScript in its favour too).
"""

from typing import Final  # noqa: F401  (``torch.jit.Final`` is typing's)


def is_scripting() -> bool:
    """False: nothing runs as TorchScript here (eager PyTorch answers the same)."""
    return False


def is_tracing() -> bool:
    """False: there is no TorchScript tracer (``strata.compile`` traces without this flag)."""
    return False


def ignore(drop=False, **kwargs):
    """``@jit.ignore`` or ``@jit.ignore(drop=True)``: the function, unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@jit.unused``: the function, unchanged."""
    return fn


def export(fn):
    """``@jit.export``: the method, unchanged."""
    return fn


def _not_built(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"strata.jit.{name}: TorchScript is not implemented in strata; compile with "
            f"strata.compile instead (PyTorch deprecates torch.jit.{name} in its favour)")
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


script = _not_built("script")
trace = _not_built("trace")
trace_module = _not_built("trace_module")
save = _not_built("save")
load = _not_built("load")
freeze = _not_built("freeze")
optimize_for_inference = _not_built("optimize_for_inference")
