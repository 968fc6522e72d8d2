"""The generated records (Note [Generated records], ``autograd/record.py``) record what the
general ``autograd_kernel`` records, slot for slot, and what PyTorch records; the kernels marked
as calling no ops (Note [Kernels that call no ops]) dispatch nothing inside."""

import contextlib

import numpy as np
import pytest
import torch
from helpers import to_strata
from hypothesis import given, settings
from hypothesis import strategies as st
from op_samples import all_samples

import strata
from strata.autograd import record
from strata.autograd.graph import SavedVariable
from strata.autograd.kernel import OpNode
from strata.core import trace
from strata.dispatch import dispatcher as DP
from strata.dispatch.keys import DispatchKey
from strata.ops import pointwise as P
from strata.ops.op import REGISTRY


def _clear_all_caches():
    for op in REGISTRY.values():
        DP._clear_caches(op)


@contextlib.contextmanager
def general_kernel():
    """Record through the general ``autograd_kernel`` only (no op specialised) in the block."""
    kernels = [k for k in DP._fallbacks.values() if k.specialize is not None]
    for k in kernels:
        k.specialize = None
    _clear_all_caches()
    try:
        yield
    finally:
        for k in kernels:
            k.specialize = record.specialize
        _clear_all_caches()


def _view_of_leaf(m, a):
    return a[0:1] if a.ndim == 1 else a[:, 0:1]


# Each case: fn(m, a, b) on two leaves; ``a`` requires grad or not, ``b`` likewise.
CASES = {
    "add": lambda m, a, b: a + b,
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2),
    "add_number": lambda m, a, b: m.add(a, 2.5),
    "non_leaf_inputs": lambda m, a, b: (a * 2) - (b * 3),
    "view_input": lambda m, a, b: _view_of_leaf(m, a) * b,
    "stale_view": lambda m, a, b: _stale_view(a) + b,
    "saves_result": lambda m, a, b: (a + b).exp(),
    "addmm_transposed_weight": lambda m, a, b: m.addmm(b[0], a, b.t()),
    "linear": lambda m, a, b: m.nn.functional.linear(a, b, b[0]),
    "linear_no_bias": lambda m, a, b: m.nn.functional.linear(a, b),
    "t_of_non_leaf": lambda m, a, b: (a * b).t(),
    "transpose_of_view": lambda m, a, b: _view_of_leaf(m, a).transpose(0, 1) * b[0],
    "split_piece_view": lambda m, a, b: (a * 1).split(1)[0].t() + b[0:1].t(),
}


def _stale_view(a):
    """A view whose base changed in place after it was made: its grad_fn is remade."""
    base = a * 1
    view = base[0:1]
    base.mul_(2)
    return view


def _describe(node, seen=None):
    """A recorded graph as plain values: each node's name, slots and edges, recursively."""
    if node is None:
        return None
    out = {"name": node.name(), "output_meta": node._output_meta}
    if isinstance(node, OpNode):
        out["needs"] = node._needs
        out["input_meta"] = node._input_meta
        out["args"] = tuple(_saved(v) for v in node._args)
        out["results"] = None if node._results is None else \
            tuple(v is not None for v in node._results)
        out["released"] = node._released
    for slot in ("_pre_hooks", "_post_hooks", "_tensor_hooks", "_retain_hooks", "_trace",
                 "_metadata"):
        out[slot] = getattr(node, slot)
    out["next"] = tuple((_describe(n), k) for n, k in node.next_functions)
    return out


def _saved(value):
    if isinstance(value, SavedVariable):
        return ("saved", value._version, value._data.data_ptr())
    if isinstance(value, strata.Tensor):
        return ("tensor", value.data_ptr())
    return value if isinstance(value, (int, float, tuple, type(None))) else type(value).__name__


def _autograd_state(t):
    ag = t._ag
    return None if ag is None else (ag.requires_grad, ag.output_nr, ag.attr_version,
                                    ag.creation_meta, ag.retains_grad, ag.grad)


def _run(case, arrays, grads):
    ts = [strata.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    out = CASES[case](strata, *ts)
    return ts, out, _describe(out.grad_fn), _autograd_state(out)


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(sorted(CASES)), n=st.integers(1, 3),
       grads=st.sampled_from([(), (0,), (1,), (0, 1)]), seed=st.integers(0, 2**16))
def test_generated_record_matches_general_kernel_and_torch(case, n, grads, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, n)).astype(np.float32) for _ in range(2)]
    ts, out, graph, state = _run(case, arrays, grads)
    with general_kernel():
        general = _run(case, arrays, grads)
    # same graph slot for slot (the storage of saved tensors aside: each run has its own)
    assert _strip_pointers(graph) == _strip_pointers(general[2])
    assert state == general[3]
    tt = [torch.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
    t_out = CASES[case](torch, *tt)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    assert out.requires_grad == t_out.requires_grad
    assert (out.grad_fn is None) == (t_out.grad_fn is None)
    if out.grad_fn is None:
        return
    assert out.grad_fn.name() == t_out.grad_fn.name()
    assert [n and n.name() for n, _ in out.grad_fn.next_functions] == \
        [n and n.name().removeprefix("torch::autograd::") for n, _ in
         t_out.grad_fn.next_functions]
    out.sum().backward()
    t_out.sum().backward()
    for s, t in zip(ts, tt):
        assert (s.grad is None) == (t.grad is None)
        if s.grad is not None:
            np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


def _strip_pointers(described):
    """Saved tensors compared by kind and version; data pointers differ between runs."""
    if isinstance(described, dict):
        return {k: _strip_pointers(v) for k, v in described.items()}
    if isinstance(described, tuple):
        if len(described) == 3 and described[0] == "saved":
            return described[:2]
        if len(described) == 2 and described[0] == "tensor":
            return "tensor"
        return tuple(_strip_pointers(v) for v in described)
    return described


def test_ops_get_their_generated_record():
    x = strata.ones(2, requires_grad=True)
    x + 1
    fn = P.add._dispatch_cache[(x._keyset)][0].fn
    assert fn is record.RECORDS[P.add]
    source = record.record_source(P.add)
    assert source.startswith("def record_add_Tensor(op, ks, args):") and "for " not in source
    # the dispatch table still names the autograd fallback
    assert "autograd_kernel [fallback]" in repr(P.add._dispatch_cache[x._keyset][0])
    # in-place ops and tensor lists keep the general kernel
    assert record.specialize(P.add_) is None
    assert record.specialize(strata.ops.aten.cat.default) is None


def test_generated_record_refuses_in_place_use_of_multi_output_and_no_grad_views():
    """The marks the general kernel leaves on views (Note [Multi-output views], no_grad views)
    are left by the generated records too: the same errors as PyTorch, state untouched."""
    for m in (strata, torch):
        a = m.ones(2, 2, requires_grad=True) * 1
        piece = a.split(1)[0].t()
        with pytest.raises(RuntimeError, match="multiple views"):
            piece.mul_(2)
        leaf = m.ones(2, 2, requires_grad=True)
        with m.no_grad():
            v = leaf.t()
        with pytest.raises(RuntimeError, match="no_grad mode"):
            v.mul_(2)
        assert v._version == 0
        np.testing.assert_array_equal(v.detach().numpy(), np.ones((2, 2), np.float32))


def test_anomaly_trace_of_a_generated_record_ends_at_the_users_line():
    x = strata.ones(2, requires_grad=True)
    with strata.autograd.detect_anomaly(check_nan=False):
        y = x * 2 + 1   # the line the trace must end at
    last = y.grad_fn._trace[-1]
    assert "y = x * 2 + 1" in last
    layer = strata.nn.Linear(2, 2)
    with strata.autograd.detect_anomaly(check_nan=False):
        out = layer(x)
    # as PyTorch's: the library's Python frame that called the op is the last one
    assert "return F.linear(input, self.weight, self.bias)" in out.grad_fn._trace[-1]
    assert "out = layer(x)" in out.grad_fn._trace[-3]


def test_trace_events_are_those_of_the_general_kernel():
    def events():
        x = strata.ones(2, requires_grad=True)
        y = strata.ones(2)
        seen = []

        class Sink:
            def record(self, ev):
                f = ev.fields
                seen.append((ev.layer, ev.name, ev.depth, f.get("key"), repr(f.get("kernel")),
                             f.get("node"), f.get("next")))
        sink = Sink()
        trace.add_sink(sink)
        try:
            x + y
            strata.nn.functional.linear(x[None], x[None], y[0:1])
        finally:
            trace.remove_sink(sink)
        return seen
    with general_kernel():
        general = events()
    assert events() == general
    assert any(e[1] == "node created" and e[5] == "AddmmBackward0" for e in general)


def _marked_ops():
    cpu = DispatchKey.CPU
    for op in REGISTRY.values():
        kernel = DP.resolve_key(op, cpu)
        if kernel is not None and kernel.calls_no_ops:
            yield op.qualname


MARKED = sorted(_marked_ops())
SAMPLES = all_samples()


def test_some_kernels_are_marked():
    assert {"aten::add.Tensor", "aten::addmm", "aten::t"} <= set(MARKED)


@pytest.mark.parametrize("qualname", [q for q in MARKED if q in SAMPLES])
def test_kernels_marked_as_calling_no_ops_dispatch_nothing_inside(qualname):
    """Note [Kernels that call no ops]: under a trace, nothing is dispatched inside the span of a
    marked kernel, for every sample of its op (views, broadcasts, mixed dtypes, numbers)."""
    inside = []

    class Sink:
        kernel_depth = None

        def record(self, ev):
            if self.kernel_depth is not None and ev.depth <= self.kernel_depth:
                self.kernel_depth = None
            if ev.layer == "kernel" and ev.fields.get("key") == "CPU":
                self.kernel_depth = ev.depth
                self.name = ev.name
            elif self.kernel_depth is not None and ev.layer == "dispatch":
                inside.append((self.name, ev.name))
    marked = {DP.resolve_key(REGISTRY[q], DispatchKey.CPU).name for q in MARKED}
    sink = Sink()
    trace.add_sink(sink)
    try:
        for sample in SAMPLES[qualname]:
            if sample.random:
                continue
            # an error sample: what it dispatched before raising counts too
            with contextlib.suppress(Exception):
                sample.fn(strata, *(to_strata(x) for x in sample.inputs))
    finally:
        trace.remove_sink(sink)
    assert not [(k, op) for k, op in inside if k in marked]


# --- Note [Generated callers] (dispatch/dispatcher.py): nn.functional.linear -----------------

def test_linear_caller_has_torch_signature():
    import inspect
    s = inspect.signature(strata.nn.functional.linear)   # torch's is a builtin: its docs'
    assert list(s.parameters) == ["input", "weight", "bias"]
    assert s.parameters["bias"].default is None


@settings(max_examples=30, deadline=None)
@given(rank=st.integers(1, 3), bias=st.sampled_from(["none", "1d", "omitted"]),
       grads=st.sampled_from([(), (0,), (1,), (2,), (0, 1, 2)]),
       keywords=st.booleans(), dtype=st.sampled_from(["float32", "float64"]),
       seed=st.integers(0, 2**16))
def test_linear_caller_matches_torch(rank, bias, grads, keywords, dtype, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((2, 3)[-rank:] if rank < 3 else (2, 2, 3)).astype(dtype),
              rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal(4).astype(dtype)]
    results = []
    for m in (strata, torch):
        ts = [m.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
        f = m.nn.functional.linear
        for _ in range(2):   # the second call finds the selection the first one cached
            if bias == "omitted":
                out = f(input=ts[0], weight=ts[1]) if keywords else f(ts[0], ts[1])
            else:
                b = None if bias == "none" else ts[2]
                out = f(ts[0], ts[1], bias=b) if keywords else f(ts[0], ts[1], b)
        name = out.grad_fn and out.grad_fn.name()
        if out.requires_grad:
            out.sum().backward()
        results.append((out.detach().numpy(), name, [t.grad for t in ts]))
    (s_out, s_name, s_grads), (t_out, t_name, t_grads) = results
    np.testing.assert_allclose(s_out, t_out, rtol=1e-5, atol=1e-5)
    # known differences of ``matmul`` (linear without a bias), outside the callers: a 1-D
    # input is squeezed out of place (ATen: squeeze_), a 3-D one viewed (ATen: _unsafe_view)
    assert s_name == t_name or bias != "1d" and (s_name, t_name) in (
        ("SqueezeBackward2", "SqueezeBackward4"), ("ViewBackward0", "UnsafeViewBackward0"))
    for sg, tg in zip(s_grads, t_grads):
        assert (sg is None) == (tg is None)
        if sg is not None:
            np.testing.assert_allclose(sg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)


def test_linear_caller_errors_as_torch():
    for m in (strata, torch):
        x, w = m.ones(2, 3), m.ones(4, 5, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x3 and 5x4\)"):
            m.nn.functional.linear(x, w)
        with pytest.raises(TypeError):
            m.nn.functional.linear(x)
        assert w.grad is None and w.grad_fn is None


def test_linear_caller_steps_aside_for_modes_traces_and_new_kernels():
    x, w = strata.ones(1, 3), strata.ones(2, 3, requires_grad=True)
    strata.nn.functional.linear(x, w)   # warm the selection
    seen = []

    class Log(strata.dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.qualname)
            return func(*args, **(kwargs or {}))
    with Log():
        strata.nn.functional.linear(x, w)
    assert seen == ["aten::t", "aten::mm"]
    report = str(strata.explain(lambda: strata.nn.functional.linear(x, w)))
    assert "aten::linear [call from linear]" in report and "node created: MmBackward0" in report
    lib = strata.library.Library("aten", "IMPL")
    lib.impl("linear", lambda input, weight, bias=None: strata.zeros(1, 2),
             "CompositeImplicitAutograd")
    try:
        assert strata.nn.functional.linear(x, w).sum().item() == 0   # the new kernel, at once
    finally:
        lib._destroy()
    assert strata.nn.functional.linear(x, w).sum().item() == 6


def test_caller_refuses_what_it_cannot_spell_out():
    aten = strata.ops.aten
    for op in (aten.cat.default, aten.add.Tensor):   # a Tensor[]; a keyword-only alpha
        with pytest.raises(ValueError, match="caller needs"):
            DP.caller(op, __name__)
    mm = DP.caller(aten.mm.default, __name__)
    a, m = strata.ones(2, 2, requires_grad=True), strata.ones(2, 2)
    out = mm(a, mat2=m)
    assert out.grad_fn.name() == "MmBackward0" and out.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert mm(m, m).grad_fn is None
