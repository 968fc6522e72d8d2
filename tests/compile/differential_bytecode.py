"""Differential cases written to reach the bytecode that differs between CPython versions
(3.12: inlined comprehensions with LOAD_FAST_AND_CLEAR, BINARY_SLICE / STORE_SLICE,
CALL_INTRINSIC_1, LOAD_SUPER_ATTR, END_FOR, RETURN_CONST, POP_JUMP_IF_NONE, LOAD_ATTR's method
bit; 3.13: CALL's [callable, self_or_null] layout, CALL_KW, TO_BOOL, LOAD_FAST_LOAD_FAST /
STORE_FAST_LOAD_FAST / STORE_FAST_STORE_FAST, SET_FUNCTION_ATTRIBUTE and closures built with
LOAD_FAST, CONVERT_VALUE / FORMAT_SIMPLE / FORMAT_WITH_SPEC, CALL_FUNCTION_EX, END_FOR + POP_TOP),
with graph breaks before them so that resume functions carry that bytecode too.
tests/compile/test_differential.py runs them like every other case, on 3.11, 3.12 and 3.13."""

from differential_cases import case


@case()
def comprehension_shadows_local(torch):
    def f(x, y):
        t = x * 0   # the comprehension's own ``t`` must not leak into (or unbind) this one
        doubled = [t * 2 for t in (x, y)]
        scales = {i: float(i + 1) for i in range(2)}
        sizes = {s for s in x.shape}
        return doubled[0] * scales[0] + doubled[1] * scales[1] + t + len(sizes)
    return f, [(3, 4), (3, 4)]


@case()
def comprehension_nested_and_filtered(torch):
    def f(x, y):
        kept = [v for v in (x, None, y) if v is not None]
        grid = [[p * q for q in kept] for p in (1.0, 2.0)]
        return grid[0][0] + grid[1][1] - grid[1][0], len([u for u in kept])
    return f, [(5,), (5,)]


def _rows_scaled(rows, scale):
    return [r * scale for r in rows]


@case()
def comprehension_in_inlined_helper(torch):
    def f(x):
        rows = _rows_scaled([x[0], x[1]], 3.0)
        return rows[0] - rows[1]
    return f, [(2, 3)]


@case()
def slices_read_and_write(torch):
    def f(x, y):
        parts = [x, y, x + y, x - y]
        middle = parts[1:3]
        parts[0:2] = [y, x]
        buf = x.clone()
        buf[1:3] = y[0:2] * 2
        n = x.shape[0]
        return buf[:n - 1] + middle[0][1:], middle[1], parts[0] - parts[1]
    return f, [(4,), (4,)]


@case()
def unary_plus_and_star_tuple(torch):
    def f(x, y):
        parts = [x, -y]
        both = (*parts, +y)
        return torch.cat(both), ~(x > 0)
    return f, [(3,), (3,)]


@case()
def loops_end_for_and_else(torch):
    def f(x):
        acc = x
        for i in range(3):
            acc = acc + i
        else:   # noqa: PLW0120  (the for-else path after END_FOR)
            acc = acc * 2
        for t in (x, x * 2):
            acc = acc - t
        return acc
    return f, [(3,)]


def _scale_in_place(t):
    t.mul_(2)   # returns None (RETURN_CONST on 3.12)


@case()
def none_checks_and_return_const(torch):
    def f(x, bias=None):
        out = x.clone()
        _scale_in_place(out)
        if bias is None:
            out = out + 1
        if bias is not None:
            out = out + bias
        if 0 < x.shape[0] <= 5 and x.dim() != 3:
            return out.sum(0)
        return out
    return f, [(2, 3)]


@case()
def super_attribute_and_method(torch):
    nn = torch.nn

    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)

        def forward(self, x):
            return self.lin(x).relu()

    class Child(Base):
        def forward(self, x):
            parent_forward = super().forward   # LOAD_SUPER_ATTR, attribute form
            return super().forward(x) * 2 + parent_forward(x)
    return Child(), [(2, 4)]


@case()
def break_then_comprehension_and_slices(torch):
    def f(x, y):
        a = x + 1
        print("graph break", end="\r")
        zs = [a * t for t in (x, y)]
        kept = [z for z in zs if z is not None]
        return kept[0][1:] + kept[1][:-1], +a
    return f, [(4,), (4,)]


@case()
def break_on_tensor_condition_then_loop(torch):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            y = y + 1
        for i in range(2):
            y = y * (i + 1)
        return [v for v in (y, x)][0][1:]   # noqa: RUF015  (a comprehension after a break)
    return f, [(4,)]


@case()
def break_then_maybe_unbound_local(torch):
    def f(x, flag=True):
        if flag:
            v = x * 3   # read after the break by LOAD_FAST_CHECK on 3.12: maybe unbound
        print("graph break", end="\r")
        return v + 1
    return f, [(3,)]


@case()
def break_inside_list_comprehension(torch):
    def f(x, y):
        a = x + 1
        zs = [print("graph break", end="\r") or a * t for t in (x, y)]
        return zs[0] + zs[1] * 2
    return f, [(3,), (3,)]


@case()
def break_inside_comprehension_reading_free_variable(torch):
    def f(x):
        t = x - 1
        total = sum([torch.sin(x).sum().item() * 0 + i for i in range(3)])
        return x * total + t
    return f, [(3,)]


@case(counted=False)   # Dynamo runs this whole frame eagerly (0 graphs); strata makes 2
def break_inside_dict_comprehension_shadowing(torch):
    def f(x, y):
        k = x * 3   # the comprehension's ``k`` is put back afterwards
        d = {k: print("graph break", end="\r") or v * 2 for k, v in enumerate((x, y))}
        return d[0] + d[1] + k
    return f, [(3,), (3,)]


def _combine(a, b, *, alpha=1.0, beta=0.0):
    return a * alpha + b + beta


@case()
def keyword_calls_and_break_at_one(torch):
    def f(x, y):
        s = _combine(x, y, alpha=2.0)                   # CALL_KW of a function
        t = x.add(y, alpha=0.5).sum(dim=0, keepdim=True)   # CALL_KW of a method: [meth, self]
        print("graph break", end="\r", flush=False)    # the break is at a CALL_KW
        return _combine(s, t, beta=1.0), torch.clamp(s, min=-1.0, max=1.0)
    return f, [(3,), (3,)]


@case()
def break_with_calls_pending_on_the_stack(torch):
    def f(x, y):
        # at the break the stack holds two unfinished calls' [callable, NULL] slots
        return torch.add(x, _combine(y, print("graph break", end="\r") or x, beta=2.0)) * 3
    return f, [(4,), (4,)]


@case()
def swaps_and_fused_locals(torch):
    def f(x, y):
        a, b = x, y
        a, b = b, a * 2                                 # STORE_FAST_STORE_FAST
        c = a + b                                       # LOAD_FAST_LOAD_FAST
        print("graph break", end="\r")
        d, e = c, a
        return [v * w for v, w in ((d, e), (b, c))]     # STORE_FAST_LOAD_FAST in the loop
    return f, [(3,), (3,)]


@case()
def closures_defaults_and_kwdefaults(torch):
    def f(x, y):
        scale = x.sum() * 0 + 2.0

        def shift(t, k=1.0, *, bias=0.5):               # SET_FUNCTION_ATTRIBUTE: all three
            return t * scale * k + bias + y             # its closure: LOAD_FAST of cells

        def unshift(t):                                 # a closure only (one attribute)
            return t - scale

        before = shift(x, 3.0)
        print("graph break", end="\r")
        return before + shift(y, bias=-1.0) + unshift(x)
    return f, [(3,), (3,)]


@case()
def fstrings_and_star_calls(torch):
    def f(x, y):
        n = x.shape[0]
        label = f"{n!r:>4}|{n:03d}|{str(n)!s}|{n}"     # CONVERT_VALUE, FORMAT_WITH_SPEC, ...
        parts = (x, y)
        options = {"dim": 0}
        joined = torch.cat(parts, **options)            # CALL_FUNCTION_EX with kwargs
        split = x.add(*parts[1:])                       # CALL_FUNCTION_EX of a method
        return joined * len(label), split
    return f, [(3,), (3,)]


@case()
def truth_tests_and_negation(torch):
    def f(x, flag=0, name=""):
        y = x * 2
        if flag or name:                                # TO_BOOL before each jump
            y = y + 1
        if not (y.sum() > 0):                           # COMPARE_OP's bool form, UNARY_NOT
            y = -y
        return y, not flag
    return f, [(3,)]


@case(counted=False)   # Dynamo graph-breaks at `not tensor`; strata runs the rest eagerly
def negated_tensor_after_break(torch):
    def f(x):
        y = x.sin() * 2
        far, zero = not (y.sum() > 100), not y.sum()    # a resume starting at UNARY_NOT
        return y * (far + 2 * zero + 1)                 # (outputs compared: tensors only)
    return f, [(3,)]
