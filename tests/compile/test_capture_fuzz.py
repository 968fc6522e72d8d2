"""A fuzzer of random small programs: each is Python source (so capture reads real bytecode),
built from pointwise ops, broadcasting, views and in-place ops (and, in one test, lines that
break the graph); compiled and eager must agree in outputs and gradients.
``derandomize=True`` keeps CI's examples fixed."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

# Each line maps tensors of shape (m, n) to shape (m, n); {x}, {y} are earlier values.
LINES = [
    "{x}.sin()", "{x}.exp().clamp(max=4.0)", "{x}.abs()", "-{x}", "{x}.relu()", "{x}.tanh()",
    "strata.sigmoid({x})", "{x} + {y}", "{x} - {y} * 0.5", "{x} * {y}", "{x} + b", "{x} * c",
    "strata.maximum({x}, {y})", "strata.where({x} > 0, {x}, {y})",
    "{x} - {x}.mean(1, keepdim=True)", "{x}.sum(0, keepdim=True) + {y}",
    "{x}.t().contiguous().t()", "{x}.reshape(-1).view({x}.shape)", "{x}[:, :].clone()",
    "{x}.unsqueeze(0).squeeze(0)", "{x}.transpose(0, 1).transpose(0, 1) * 2",
    "({x} * 1).add_({y})", "({x} + 0).mul_(0.5)", "strata.cat([{x}, {y}], 0)[:{x}.shape[0]]",
    # keyword calls, nested functions with defaults and closures, f-strings, `not`: the
    # bytecode that differs between versions (3.13: CALL_KW, SET_FUNCTION_ATTRIBUTE, closures
    # built with LOAD_FAST, CONVERT_VALUE / FORMAT_WITH_SPEC, TO_BOOL, UNARY_NOT on a bool)
    "strata.clamp({x}, min=-1.0, max=1.0)", "(lambda t, k=2.0, *, s=1.0: t * k - s)({x})",
    "(lambda t: t * {y})({x})", "{x} * len(f'{{c!r:>6}}{{c}}')", "{x} * (not (c < 0) or c)",
]


# Lines that break the graph (data-dependent values, printing, a branch on a tensor).
BREAKING_LINES = [
    "{x} * float({x}.sum().item() > 0)", "{x} + len({y}.tolist())",
    "{x} if {y}.sum() > 0 else -{x}", "{x} + _quiet_print({y})",
    "_quiet_print({y}, end='') + {x}", "{x} * (not ({y}.sum() > 1e9))",
]


def _quiet_print(t, end=""):
    print(end=end)
    return t * 0


@st.composite
def programs(draw, lines=tuple(LINES)):
    n_lines = draw(st.integers(1, 6))
    body, names = [], ["a"]
    for i in range(n_lines):
        template = draw(st.sampled_from(lines))
        x, y = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        body.append(f"    t{i} = {template.format(x=x, y=y)}")
        names.append(f"t{i}")
    body.append(f"    return {names[-1]}")
    source = "def program(a, b, c):\n" + "\n".join(body) + "\n"
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    b_shape = draw(st.sampled_from([(n,), (m, 1), (m, n), (1, n)]))
    return source, (m, n), b_shape


def _make(source):
    namespace = {"strata": strata, "_quiet_print": _quiet_print}
    exec(compile(source, "<fuzzed program>", "exec"), namespace)
    return namespace["program"]


def _run(fn, shape, b_shape, seed):
    rng = np.random.default_rng(seed)
    a = strata.from_numpy(rng.standard_normal(shape).astype(np.float32)).requires_grad_(True)
    b = strata.from_numpy(rng.standard_normal(b_shape).astype(np.float32))
    out = fn(a, b, 1.5)
    out.sum().backward()
    return out.detach().numpy(), a.grad.numpy()


def _check(program, backend, fullgraph=True):
    source, shape, b_shape = program
    strata._dynamo.reset()
    fn = _make(source)
    expected = _run(fn, shape, b_shape, 0)
    compiled = strata.compile(fn, backend=backend, fullgraph=fullgraph)
    for got, want in zip(_run(compiled, shape, b_shape, 0), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=source)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(programs())
def test_random_programs_eager_backend(program):
    _check(program, "eager")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(programs())
def test_random_programs_aot_eager_backend(program):
    _check(program, "aot_eager")


@settings(max_examples=30, deadline=None, derandomize=True)
@given(programs(lines=tuple(LINES + BREAKING_LINES)))
def test_random_programs_with_graph_breaks(program):
    _check(program, "eager", fullgraph=False)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(programs(), st.sampled_from([None, True]))
def test_random_programs_over_changing_sizes(program, dynamic):
    """Automatic dynamic shapes (dynamic=None) and dynamic=True: every size equals eager."""
    source, (m, n), b_shape = program
    strata._dynamo.reset()
    fn = _make(source)
    compiled = strata.compile(fn, backend="eager", dynamic=dynamic)
    for rows in (m + 1, m + 2, m + 4):
        shape = (rows, n)
        b = tuple(rows if d == m and i == 0 and len(b_shape) == 2 else d
                  for i, d in enumerate(b_shape))
        for got, want in zip(_run(compiled, shape, b, 1), _run(fn, shape, b, 1)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=source)
