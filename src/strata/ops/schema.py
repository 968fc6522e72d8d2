"""Operator schemas in PyTorch's string format, parsed, and used to bind call arguments.

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
    max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

The grammar is the one of ``torch/csrc/jit/frontend/function_schema_parser.cpp``: an optional
``ns::`` prefix, a name with an optional ``.overload``, typed arguments (``*`` starts the
keyword-only ones), and returns. ``Tensor(a)`` marks an output that aliases input ``a`` (a
view); ``Tensor(a!)`` an argument that is written in place.
"""

import re
from dataclasses import dataclass

_MISSING = object()


@dataclass(frozen=True)
class Argument:
    name: str
    type: str            # e.g. "Tensor", "Tensor?", "int[]", "Scalar"
    default: object      # _MISSING when required
    kwarg_only: bool
    alias: str | None    # "a" for Tensor(a), "a!" for Tensor(a!)

    @property
    def is_tensor(self) -> bool:
        return self.type in ("Tensor", "Tensor?")

    @property
    def is_tensor_list(self) -> bool:
        return self.type in ("Tensor[]", "Tensor?[]")

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    def __str__(self):
        t = self.type
        if self.alias:
            base, q = (t[:-1], "?") if t.endswith("?") else (t, "")
            t = f"{base}({self.alias}){q}"
        s = f"{t} {self.name}"
        if self.has_default:
            s += f"={_format_default(self.default)}"
        return s


@dataclass(frozen=True)
class Schema:
    namespace: str
    name: str
    overload: str          # "" for the default overload
    arguments: tuple
    returns: tuple         # of Argument (names may be "")

    @property
    def op_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        return any(a.is_write for a in self.arguments)

    @property
    def is_view(self) -> bool:
        return any(r.alias and not r.alias.endswith("!") for r in self.returns)

    def __str__(self):
        args = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        rets = [str(r).strip() for r in self.returns]
        ret = rets[0] if len(rets) == 1 else f"({', '.join(rets)})"
        return f"{self.namespace}::{self.op_name}({', '.join(args)}) -> {ret}"


_TYPE_RE = re.compile(r"^(?P<base>[A-Za-z]+)(?:\((?P<alias>[a-z]!?)\))?(?P<list>\[\d*\])?"
                      r"(?P<opt>\?)?(?P<list2>\[\d*\])?$")


def _split_top(s: str) -> list:
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_type(text: str):
    m = _TYPE_RE.match(text)
    if not m:
        raise ValueError(f"cannot parse type {text!r}")
    base = m["base"]
    lst = m["list"] or m["list2"]
    typ = base + ("[]" if lst else "")
    if m["opt"]:
        typ = f"{base}?[]" if m["list2"] else typ + "?"
    return typ, m["alias"]


def _parse_default(text: str):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return tuple(_parse_default(x.strip()) for x in inner.split(",")) if inner else ()
    if text.startswith(("'", '"')):
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # an enum-like name such as contiguous_format or Mean


def _format_default(value):
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    if isinstance(value, str):
        return f'"{value}"' if " " in value else value
    return repr(value)


def _parse_arg(text: str, kwarg_only: bool) -> Argument:
    text = text.strip()
    default = _MISSING
    if "=" in text:
        text, dtext = text.split("=", 1)
        default = _parse_default(dtext.strip())
    typ_text, _, name = text.strip().rpartition(" ")
    if not typ_text:  # unnamed return, e.g. "Tensor"
        typ_text, name = name, ""
    typ, alias = _parse_type(typ_text.strip())
    return Argument(name, typ, default, kwarg_only, alias)


def parse_schema(text: str, default_namespace: str = "aten") -> Schema:
    m = re.match(r"^\s*(?:(\w+)::)?([\w]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", text)
    if not m:
        raise ValueError(f"invalid operator schema: {text!r}")
    ns, name, overload, args_text, ret_text = m.groups()
    arguments = []
    kwarg_only = False
    for part in _split_top(args_text):
        if part == "*":
            kwarg_only = True
            continue
        arguments.append(_parse_arg(part, kwarg_only))
    if ret_text.startswith("(") and ret_text.endswith(")"):
        returns = tuple(_parse_arg(p, False) for p in _split_top(ret_text[1:-1]))
    else:
        returns = (_parse_arg(ret_text, False),)
    names = [a.name for a in arguments]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate argument names in schema {text!r}")
    return Schema(ns or default_namespace, name, overload or "", tuple(arguments), returns)


class Binder:
    """Turns ``(*args, **kwargs)`` into the full positional tuple a kernel receives.

    Kernels always see every schema argument positionally, in schema order, defaults filled in;
    the dispatcher takes the fast path when the caller already passed exactly that.
    """

    __slots__ = ("schema", "names", "n", "defaults", "n_positional", "index", "n_required")

    def __init__(self, schema: Schema):
        self.schema = schema
        self.names = tuple(a.name for a in schema.arguments)
        self.n = len(self.names)
        self.defaults = tuple(a.default for a in schema.arguments)
        self.n_positional = sum(not a.kwarg_only for a in schema.arguments)
        self.index = {n: i for i, n in enumerate(self.names)}
        # the fewest positional arguments after which every argument has a default
        self.n_required = next((i for i in range(self.n, 0, -1)
                                if self.defaults[i - 1] is _MISSING), 0)

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        n = len(args)
        if not kwargs and self.n_required <= n <= self.n_positional:
            return args + self.defaults[n:]   # positional, defaults after: the common call
        if n > self.n_positional:
            raise TypeError(f"{self.schema.op_name}() takes {self.n_positional} positional "
                            f"arguments but {len(args)} were given")
        out = list(args) + [_MISSING] * (self.n - len(args))
        for key, value in kwargs.items():
            i = self.index.get(key)
            if i is None and key == "input":  # PyTorch's Python API calls `self` `input`
                i = self.index.get("self")
            if i is None:
                raise TypeError(f"{self.schema.op_name}() got an unexpected keyword argument "
                                f"'{key}'")
            if out[i] is not _MISSING:
                raise TypeError(f"{self.schema.op_name}() got multiple values for argument "
                                f"'{key}'")
            out[i] = value
        for i, value in enumerate(out):
            if value is _MISSING:
                default = self.defaults[i]
                if default is _MISSING:
                    raise TypeError(f"{self.schema.op_name}() missing required argument "
                                    f"'{self.names[i]}' (schema: {self.schema})")
                out[i] = default
        return tuple(out)
