"""Guards: what must still hold for a compiled frame to be reused, checked before every call.

Each guard is a Python expression over the frame's locals ``L`` and globals ``G``, named by the
source of the value it checks (``capture/source.py``). All guards of one cache entry are
generated as ONE Python function from source, like FX's codegen, with each source fetched once
into a local (``L['self']._modules['lin']`` is read once for all the guards below it); Dynamo
compiles its guards into a C++ tree for the same reason. When every guard holds, the function
returns the graph's inputs it already fetched, so the compiled frame does not fetch them again.
Only when the check fails does the slow path evaluate guards one by one to say which failed and
why (``STRATA_LOGS=recompiles``).
"""

import contextlib
import re

from ..core import dtype as dtype_mod
from ..core.shape import contiguous_strides
from ..dispatch.tls import state as dispatch_state


class GuardBuilder:
    def __init__(self):
        self.entries: list[tuple] = []     # (source expr | None, template, describe)
        self.namespace: dict = {"___tls": dispatch_state(),
                                "___default_dtype": dtype_mod.get_default_dtype}
        self._seen: set = set()
        self._suppress = 0

    def _const(self, value) -> str:
        name = f"___c{len(self.namespace)}"
        self.namespace[name] = value
        return name

    @contextlib.contextmanager
    def suppressed(self):
        """Values read inside strata's own modules (an inlined ``Linear.forward`` reading
        ``F``) are part of the framework, not the user's program: no guards on them."""
        self._suppress += 1
        try:
            yield
        finally:
            self._suppress -= 1

    def _add(self, key, source_expr, template, describe):
        if self._suppress or key in self._seen:
            return
        self._seen.add(key)
        self.entries.append((source_expr, template, describe))

    # --- kinds of guard -------------------------------------------------------------------------
    def add_tensor(self, source, t, dynamic_dims=frozenset()):
        cls, dt = self._const(type(t)), self._const(t.dtype)
        dev = self._const(t.device)
        parts = [f"type({{0}}) is {cls}", f"{{0}}._keyset == {t._keyset}",
                 f"{{0}}.dtype is {dt}", f"({{0}}.device is {dev} or {{0}}.device == {dev})",
                 f"{{0}}.requires_grad is {t.requires_grad}"]
        # TensorImpl's own fields, not Tensor.stride()/shape (each builds a new object)
        shape = tuple(t.shape)
        strides = tuple(t.stride())
        if not dynamic_dims:
            # one tuple comparison (identity first, element by element, in C); a contiguous
            # tensor may keep _strides None
            expected_fields = self._const((type(t), t._keyset, t.dtype, t.device,
                                           t.requires_grad, shape, strides))
            contiguous = strides == contiguous_strides(shape)
            parts = [f"(type({{0}}), {{0}}._keyset, {{0}}.dtype, {{0}}.device, "
                     f"{{0}}.requires_grad, {{0}}._shape, "
                     f"{{0}}._strides{f' or {strides!r}' if contiguous else ''}) == "
                     f"{expected_fields}"]
        elif dynamic_dims:
            parts.append(f"len({{0}}._shape) == {len(shape)}")
            for d, size in enumerate(shape):
                parts.append(f"{{0}}._shape[{d}] >= 2" if d in dynamic_dims
                             else f"{{0}}._shape[{d}] == {size}")
            parts.append(f"{{0}}.is_contiguous() is {t.is_contiguous()}")
        expected = (type(t), t._keyset, t.dtype, t.device, t.requires_grad, shape,
                    tuple(t.stride()), frozenset(dynamic_dims))
        self._add(("tensor", source.expr), source.expr, " and ".join(parts),
                  lambda v, e=expected, s=source.expr: tensor_mismatch(s, v, e))

    def add_constant(self, source, value):
        if value is None or isinstance(value, (bool, dtype_mod.dtype)) or value is Ellipsis:
            template = f"{{0}} is {self._const(value)}"
        else:
            template = f"type({{0}}) is {self._const(type(value))} and {{0}} == " \
                       f"{self._const(value)}"
        self._add(("const", source.expr), source.expr, template,
                  lambda v, e=value, s=source.expr: f"{s} == {e!r}, actual {v!r}")

    def add_id(self, source, value):
        self._add(("id", source.expr), source.expr, f"id({{0}}) == {id(value)}",
                  lambda v, e=value, s=source.expr: f"{s} is not the object it was "
                                                    f"({type(e).__name__} at {id(e):#x})")

    def add_len(self, source, value):
        self._add(("len", source.expr), source.expr,
                  f"type({{0}}) is {self._const(type(value))} and len({{0}}) == {len(value)}",
                  lambda v, e=len(value), s=source.expr: f"len({s}) == {e}, actual {_len(v)}")

    def add_no_hooks(self, source, names):
        """The module at ``source`` has none of the hook dicts ``names`` filled."""
        self._add(("no_hooks", source.expr), source.expr,
                  "not (" + " or ".join(f"{{0}}.{n}" for n in names) + ")",
                  lambda v, s=source.expr: f"hooks were added to {s}")

    def add_keys(self, source, keys):
        template = "not {0}" if not keys else f"list({{0}}) == {self._const(list(keys))}"
        self._add(("keys", source.expr), source.expr, template,
                  lambda v, e=list(keys), s=source.expr: f"keys of {s}: expected {e}, "
                                                         f"actual {list(v)}")

    def add_keys_of_object(self, obj, name, keys):
        template = f"not {self._const(obj)}" if not keys else \
            f"list({self._const(obj)}) == {self._const(list(keys))}"
        self._add(("keys", name), None, template,
                  lambda v, n=name: f"{n} changed")

    def add_expr(self, expr, description):
        self._add(("expr", expr), None, expr, lambda v, d=description: f"{d} no longer holds")

    def add_global_state(self):
        s = dispatch_state()
        dd = self._const(dtype_mod.get_default_dtype())
        template = (f"___tls.grad_enabled is {s.grad_enabled} and ___tls.include == {s.include}"
                    f" and ___tls.exclude == {s.exclude} and ___default_dtype() is {dd}")
        expected = (s.grad_enabled, s.include, s.exclude, dtype_mod.get_default_dtype())
        self._add(("global_state",), None, template,
                  lambda v, e=expected: global_state_mismatch(e))

    # --- code generation ------------------------------------------------------------------------
    def source_code(self, inputs=()) -> str:
        """``___guard(L, G)``: None when a guard fails, else the tuple of the values at
        ``inputs`` (the graph's inputs, already fetched for their guards)."""
        lines, assigned = [], {}

        def fetch(expr):
            if expr in assigned:
                return assigned[expr]
            best = max((p for p in assigned if expr.startswith(p) and expr[len(p)] in ".["),
                       key=len, default=None)
            text = assigned[best] + expr[len(best):] if best else expr
            name = f"v{len(assigned)}"
            assigned[expr] = name
            lines.append(f"        {name} = {text}")
            return name

        for source_expr, template, _ in self.entries:
            target = fetch(source_expr) if source_expr is not None else None
            lines.append(f"        if not ({template.format(target)}):")
            lines.append("            return None")
        values = [fetch(expr) for expr in inputs]
        lines.append(f"        return ({''.join(v + ', ' for v in values)})")
        return ("def ___guard(L, G):\n    try:\n" + "\n".join(lines) +
                "\n    except Exception:\n        return None\n")

    def build(self, inputs=()):
        """The guard function and the text it was generated from."""
        src = self.source_code(inputs)
        namespace = dict(self.namespace)
        exec(compile(src, "<strata guards>", "exec"), namespace)
        return namespace["___guard"], src

    def failure_reason(self, L, G) -> str:
        """The first guard that fails for these inputs, said in words."""
        namespace = dict(self.namespace, L=L, G=G)
        for source_expr, template, describe in self.entries:
            try:
                value = eval(source_expr, namespace) if source_expr is not None else None
                holds = eval(template.format("___v"), dict(namespace, ___v=value))
            except Exception as e:
                return f"{source_expr}: {type(e).__name__}: {e}"
            if not holds:
                return describe(value)
        return "unknown"

    def describe(self) -> list[str]:
        """Each guard as readable text (``explain``, ``STRATA_LOGS=guards``)."""
        out = []
        for source_expr, template, _ in self.entries:
            text = template.format(source_expr) if source_expr else template
            out.append(re.sub(r"___c\d+", lambda m: _short(self.namespace[m.group()]), text))
        return out


def _len(value):
    return len(value) if hasattr(value, "__len__") else repr(value)


def _short(value):
    if isinstance(value, type):
        return value.__qualname__
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def tensor_mismatch(source, value, expected) -> str:
    cls, keyset, dt, dev, rg, shape, strides, dynamic = expected
    head = f"tensor '{source}'"
    if type(value) is not cls:
        return f"{head} type mismatch. expected {cls.__name__}, actual {type(value).__name__}"
    if value.dtype is not dt:
        return f"{head} dtype mismatch. expected {dt}, actual {value.dtype}"
    if value.device != dev:
        return f"{head} device mismatch. expected {dev}, actual {value.device}"
    if value.requires_grad != rg:
        return f"{head} requires_grad mismatch. expected requires_grad={int(rg)}"
    if value._keyset != keyset:
        return f"{head} dispatch key set mismatch. expected {keyset}, actual {value._keyset}"
    if value.dim() != len(shape):
        return f"{head} rank mismatch. expected {len(shape)}, actual {value.dim()}"
    for i, (e, a) in enumerate(zip(shape, value.shape)):
        if i in dynamic:
            if a < 2:
                return f"{head} size at index {i} is {a} (0/1 specialised; dynamic needs >= 2)"
        elif e != a:
            return f"{head} size mismatch at index {i}. expected {e}, actual {a}"
    for i, (e, a) in enumerate(zip(strides, value.stride())):
        if not dynamic and e != a:
            return f"{head} stride mismatch at index {i}. expected {e}, actual {a}"
    return f"{head} contiguity changed"


def global_state_mismatch(expected) -> str:
    s = dispatch_state()
    grad, include, exclude, default = expected
    if s.grad_enabled is not grad:
        return f"GLOBAL_STATE changed: grad_mode (expected {grad}, actual {s.grad_enabled})"
    if s.include != include or s.exclude != exclude:
        return "GLOBAL_STATE changed: autocast or dispatch keys (TLS include/exclude)"
    return f"GLOBAL_STATE changed: default dtype (expected {default})"
