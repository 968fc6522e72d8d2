"""``assert_close`` as ``torch/testing/_comparison.py`` does it: pair the inputs up (tensors,
Python numbers, booleans, sequences and mappings of them), check the attributes that must match
(shape, device, dtype, layout, strides), then the values with ``isclose`` and per-dtype default
tolerances, failing with PyTorch's messages."""

import collections.abc
import math

import numpy as np

from .._tensor import Tensor
from ..core import dtype as D
from ..tensor_new import as_tensor

# (rtol, atol) when neither is given: the looser of the two inputs' dtypes (``default_tolerances``)
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5), D.float32: (1.3e-6, 1e-5),
               D.float64: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its message."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    found = [_TOLERANCES.get(dt, (0.0, 0.0)) for dt in dtypes]
    return max(r for r, _ in found), max(a for _, a in found)


def _diff_message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    """``_make_mismatch_msg``: 'equal' when both tolerances are zero, else 'close'."""
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _diff_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                         rel_diff, None, rtol)


def _tensor_message(actual, expected, matches, rtol, atol):
    total = matches.numel()
    mismatched = total - int(matches.sum().item())
    a, e, ok = actual.reshape(-1), expected.reshape(-1), matches.reshape(-1)
    if not actual.is_floating_point():
        a, e = a.to(D.int64), e.to(D.int64)
    abs_diff = (a - e).abs().masked_fill(ok, 0)
    rel_diff = (abs_diff / e.abs()).masked_fill(ok, 0)
    shape = tuple(actual.shape)

    def greatest(diff):
        value, index = diff.max(0)
        return value.item(), tuple(int(i) for i in np.unravel_index(int(index.item()), shape))

    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    return _diff_message("Tensor-likes", extra, *greatest(abs_diff), atol, *greatest(rel_diff),
                         rtol)


def _check_attributes(actual, expected, check_device, check_dtype, check_layout, check_stride):
    checks = [("shape", lambda t: t.shape, True), ("device", lambda t: t.device, check_device),
              ("dtype", lambda t: t.dtype, check_dtype), ("layout", lambda t: t.layout,
                                                          check_layout),
              ("stride()", lambda t: t.stride(), check_stride)]
    for name, get, wanted in checks:
        if wanted and get(actual) != get(expected):
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: "
                                            f"{get(actual)} != {get(expected)}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, checks):
    _check_attributes(actual, expected, *checks)
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    if actual.dtype is not expected.dtype:   # check_dtype=False: compare in the common dtype
        common = D.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.device != expected.device:     # check_device=False: compare on the CPU
        actual, expected = actual.cpu(), expected.cpu()
    matches = actual.isclose(expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all().item()):
        return
    if actual.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_message(actual.item(), expected.item(), rtol,
                                                        atol))
    raise _Mismatch(AssertionError, _tensor_message(actual, expected, matches, rtol, atol))


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                        f"{type(expected)}.")
    floating = isinstance(actual, float) or isinstance(expected, float)
    rtol, atol = _tolerances((D.float64 if floating else D.int64,), rtol, atol)
    if actual == expected or (equal_nan and math.isnan(actual) and math.isnan(expected)):
        return
    if abs(actual - expected) <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol))


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare(actual, expected, path, options):
    """Compare one pair, recursing into sequences and mappings; ``path`` names the item."""
    rtol, atol, equal_nan, checks = options
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            missing = sorted(set(expected) - set(actual), key=repr)
            extra = sorted(set(actual) - set(expected), key=repr)
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {missing}\n"
                                            f"Additional keys in the actual mapping: {extra}")
        for key in actual:
            _compare(actual[key], expected[key], path + (key,), options)
        return
    try:
        _compare_leaf(actual, expected, rtol, atol, equal_nan, checks)
    except _Mismatch as e:
        if path:
            where = "".join(str([item]) for item in path)
            raise _Mismatch(e.kind, f"{e}\n\nThe failure occurred for item {where}") from None
        raise


def _compare_leaf(actual, expected, rtol, atol, equal_nan, checks):
    # PyTorch's pairs: None with None, tensor with tensor, array with array (not mixed)
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
    elif (isinstance(actual, Tensor) and isinstance(expected, Tensor)) or (
            isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray)):
        _compare_tensors(as_tensor(actual), as_tensor(expected), rtol, atol, equal_nan, checks)
    elif isinstance(actual, bool) and isinstance(expected, bool):
        if actual != expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
    elif _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, rtol, atol, equal_nan, checks[1])
    else:
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                                   f"{type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with matching shape, device
    and dtype. Without ``rtol``/``atol`` the tolerances are the inputs' dtype defaults (float32:
    1.3e-6 and 1e-5; integers and bool: exact). ``msg`` replaces the message, or, if callable,
    maps it to a new one.

        >>> assert_close(strata.tensor([1.0]), strata.tensor([1.0 + 1e-7]))
    """
    checks = (check_device, check_dtype, check_layout, check_stride)
    try:
        _compare(actual, expected, (), (rtol, atol, equal_nan, checks))
    except _Mismatch as e:
        message = str(e)
        if msg is not None:
            message = msg(message) if callable(msg) else msg
        raise e.kind(message) from None
