"""How tensors print: ``repr(t)`` exactly as PyTorch's ``torch/_tensor_str.py`` writes it.

The algorithm, restated over NumPy arrays (the tensor's values copied to the host once):

1. One ``_Formatter`` looks at every value that will be shown (only the edge items when the
   tensor is summarised) and picks a mode: integers as ``str``; floats in *int mode* (``1.``)
   when every finite non-zero value is integral, in *scientific mode* (``1.0000e+10``) when
   max/min > 1000, max > 1e8 or min < 1e-4 over the finite non-zero magnitudes, else fixed-point
   with ``precision`` digits. Its width is the widest formatted value; every value is padded to it.
2. A vector prints as ``[a, b, c]`` wrapped at ``linewidth`` (indented under the opening
   bracket); higher dims join their rows with ``,`` plus one newline per remaining dim.
   Above ``threshold`` elements each dim shows ``edgeitems`` rows at each end around ``...``.
3. Suffixes follow the data: ``device=``, ``size=`` (empty and meta tensors), ``dtype=`` (unless
   the dtype is the default float, int64 or bool), ``grad_fn=<...>`` or ``requires_grad=True``,
   each on a new line when it would pass ``linewidth``.
"""

import contextlib
import dataclasses
import math

import numpy as np

from .core import dtype as D


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions``.

        >>> strata.set_printoptions(precision=2)
        >>> strata.tensor([1.12345])
        tensor([1.12])
        >>> strata.set_printoptions(profile="default")

    ``profile`` ("default", "short", "full") resets the four sizes first; ``sci_mode`` is always
    set (None lets the formatter choose), like PyTorch.
    """
    if profile is not None:
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """``with strata.printoptions(precision=2): ...`` changes the options for a block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --- values -> strings ---------------------------------------------------------------------------

class _Formatter:
    """Chooses the mode and width for every value of one tensor (see the module docstring)."""

    def __init__(self, arr: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not floating:
            if flat.size:
                # str() of an integer is widest at one of the extremes (sign and digit count).
                lo, hi = flat.min().item(), flat.max().item()
                self.max_width = max(len(str(lo)), len(str(hi)))
            return
        values = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if values.size == 0:
            return
        magnitudes = np.abs(values)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(values == np.ceil(values)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        if self.sci_mode:
            spec, extra = f".{p}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1      # room for the "." that marks a float
        else:
            spec, extra = f".{p}f", 0
        for v in np.unique(values).tolist():
            self.max_width = max(self.max_width, len(format(v, spec)) + extra)

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                s = format(value, f"{self.max_width}.{PRINT_OPTS.precision}e")
            elif self.int_mode:
                s = format(value, ".0f")
                if not (math.isinf(value) or math.isnan(value)):
                    s += "."
            else:
                s = format(value, f".{PRINT_OPTS.precision}f")
        else:
            s = str(value)
        return (self.max_width - len(s)) * " " + s


class _ComplexFormatter:
    """A complex value as PyTorch prints it: the real part padded, then the imaginary part with
    its sign and a ``j`` (``1.5000-4.2500j``), each part with its own formatter."""

    def __init__(self, arr: np.ndarray):
        self.real = _Formatter(arr.real, True)
        self.imag = _Formatter(arr.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


def _vector_str(arr, indent, summarize, fmt):
    element_length = fmt.max_width + 2      # ", " between elements
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        items = ([fmt.format(v) for v in arr[:edge].tolist()] + [" ..."]
                 + [fmt.format(v) for v in arr[-edge:].tolist()])
    else:
        items = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(arr, indent, summarize, fmt):
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        rows = ([_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                + [_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)])
    else:
        rows = [_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _summarized(arr):
    """The values a summarised print shows (``edgeitems`` at each end of every dim)."""
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        # arr[-0:] is the whole vector, as in PyTorch when edgeitems == 0
        return np.concatenate((arr[:edge], arr[-edge:])) if arr.shape[0] > 2 * edge else arr
    if not edge:
        return np.empty((0,) * arr.ndim, arr.dtype)
    n = arr.shape[0]
    rows = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return np.stack([_summarized(arr[i]) for i in rows])


def _values_str(arr, floating, indent):
    summarize = arr.size > PRINT_OPTS.threshold
    shown = _summarized(arr) if summarize else arr
    fmt = _ComplexFormatter(shown) if np.iscomplexobj(arr) else _Formatter(shown, floating)
    return _nested_str(arr, indent, summarize, fmt)


def _host_values(t) -> np.ndarray:
    """The tensor's values on the host; half floats widened exactly so Python formats them."""
    if t.device.type != "cpu":
        t = t.detach().cpu()
    arr = t._np()
    if t.dtype in (D.float16, D.bfloat16):
        arr = arr.astype(np.float32)
    return arr


# --- the whole repr ----------------------------------------------------------------------------

def _add_suffixes(text, suffixes, indent, force_newline=False):
    """``force_newline``: the first suffix starts a new line (sparse tensors, as in PyTorch)."""
    parts = [text]
    # PyTorch's arithmetic, kept as is: without a newline rfind gives -1, so this is len + 2.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        # Measured as PyTorch spells it ("torch.int32"), so lines break where PyTorch's do.
        width = len(suffix.replace("strata.", "torch."))
        if force_newline or last_line_len + width + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + width
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += width + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(grad_fn):
    name = getattr(grad_fn, "name", None)
    return name() if callable(name) else type(grad_fn).__name__


def _sparse_str(t, indent):
    """A sparse COO tensor's ``indices=tensor(...)`` and ``values=tensor(...)``, one per line,
    as PyTorch prints them (no dtype inside: the outer suffixes carry it)."""
    parts = []
    for name, part in (("indices", t._indices()), ("values", t._values())):
        prefix = f"{name}=tensor("
        if part.numel() == 0:
            text = f"[], size={tuple(part.shape)}"
        else:
            text = _values_str(_host_values(part.detach()), part.dtype.category == D.FLOATING,
                               indent + len(prefix))
        parts.append(prefix + text + ")")
    return (",\n" + " " * indent).join(parts)


def tensor_repr(t) -> str:
    """``repr(t)``: ``tensor([1., 2.])``, ``tensor([], size=(0, 3))``, ``tensor(..., device=...``"""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = D.get_default_dtype()
    if t.device.type == "meta":
        suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        text = "..."
    elif t.is_sparse:
        suffixes += [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        suffixes.append(f"layout=strata.{t.layout}")
        text = _sparse_str(t, indent)
    elif t.numel() == 0:
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not default:  # no values to tell an int64 tensor from a float one
            suffixes.append(f"dtype={t.dtype}")
        text = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype not in (default, D.get_default_complex_dtype(), D.int64, D.bool_):
            suffixes.append(f"dtype={t.dtype}")
        text = _values_str(_host_values(t), t.dtype.category == D.FLOATING, indent)
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + text, suffixes, indent, force_newline=t.is_sparse)
