"""``strata.<op>`` functions generated from op declarations (``function=`` in ``ops/``).

Each generated function accepts PyTorch's keyword names (``input=``, ``dim=``) and ``out=``:
the result is computed, then copied into ``out`` (resized if it has the wrong shape), which is
PyTorch's out= contract for the functional ops strata supports.
"""

import numpy as np

from .core.dtype import can_cast
from .core.tensor_impl import TensorImpl
from .ops.meta_rules import type_name
from .ops.op import REGISTRY


def write_out(out, result):
    """PyTorch's out= contract: the result must cast safely into ``out``'s dtype (checked before
    anything is written); ``out`` is resized when its shape differs; then the values are copied."""
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {type_name(result.dtype)} can't be cast to the desired "
                           f"output type {type_name(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            import warnings
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future "
                          f"PyTorch release outputs will not be resized unless they have zero "
                          f"elements. You can explicitly reuse an out tensor t by resizing it, "
                          f"inplace, to zero elements with t.resize_(0).", UserWarning,
                          stacklevel=3)
        out.resize_(result.shape)
    out.copy_(result)
    return out


def argument_type_error(op, args, kwargs, first_position=1):
    """PyTorch's argument-parser error for a value where the schema wants a Tensor and no number
    is taken either (a NumPy array, a string, a list): ``maximum(): argument 'other' (position
    2) must be Tensor, not numpy.ndarray``. None when no argument is of that kind. Methods
    count positions after ``self`` (``first_position=0``)."""
    names = op.binder.names
    for i in op.tensor_positions:
        if i < len(args):
            value, where = args[i], f" (position {i + first_position})"
        elif names[i] in kwargs:
            value, where = kwargs[names[i]], ""
        else:
            continue
        if value is None or isinstance(value, (TensorImpl, bool, int, float, complex, np.generic)):
            continue
        kind = type(value)
        kind = kind.__qualname__ if kind.__module__ == "builtins" else \
            f"{kind.__module__}.{kind.__qualname__}"
        name = "input" if names[i] == "self" else names[i]
        return TypeError(f"{op.function or op.method}(): argument '{name}'{where} must be "
                         f"Tensor, not {kind}")
    return None


def optional_tensor_list_check(op, first_position=0):
    """PyTorch's argument parser takes no None in a ``Tensor?[]`` argument of a Python call
    (``x.index_put_((None, i), v)`` raises ``TypeError: expected Tensor as element 0 in
    argument 0, but got NoneType``), though the op itself takes them (``ops.aten.index_put_``,
    what indexing calls). A function checking a call's arguments, or None when ``op`` has no
    such argument (the usual case: no cost)."""
    lists = [(i, a.name) for i, a in enumerate(op.schema.arguments) if a.type == "Tensor?[]"]
    if not lists:
        return None

    def check(args, kwargs):
        for i, name in lists:
            value = args[i] if i < len(args) else kwargs.get(name)
            if isinstance(value, (tuple, list)):
                for k, element in enumerate(value):
                    if element is None:
                        raise TypeError(f"expected Tensor as element {k} in argument "
                                        f"{i - first_position}, but got NoneType")
    return check


def _make_function(op):
    check = optional_tensor_list_check(op)

    def function(*args, out=None, **kwargs):
        if check is not None:
            check(args, kwargs)
        try:
            result = op(*args, **kwargs)
        except (TypeError, AttributeError):   # a kernel or meta reading an array's ``_shape``
            error = argument_type_error(op, args, kwargs)
            if error is None:
                raise
            raise error from None
        return result if out is None else write_out(out, result)
    function.__name__ = op.function
    function.__qualname__ = op.function
    # The tracer names the frontend entry point by its code's qualname (dispatcher._call_traced).
    function.__code__ = function.__code__.replace(co_qualname=f"strata.{op.function}")
    function.__doc__ = f"Calls ``{op.qualname}``: ``{op.schema}``"
    return function


def generated_functions(existing) -> dict:
    """name -> function for every op that declared ``function=`` and is not in ``existing``."""
    out = {}
    for op in REGISTRY.values():
        name = op.function
        if name and name not in existing and name not in out:
            out[name] = _make_function(op)
    return out
