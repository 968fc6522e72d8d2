"""Autograd semantics against PyTorch: the engine (accumulation, retain_graph, create_graph,
hooks and their order, retain_grad, autograd.grad), in-place and view rules, grad modes,
saved-tensor checks, anomaly mode, custom Functions, gradcheck, and the derivative registry."""

import math
import re
import threading
import warnings

import numpy as np
import pytest
import strata
import torch
from hypothesis import given
from hypothesis import strategies as st
from strata.autograd import derivatives as DV
from strata.ops.op import REGISTRY

A = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]])
B = np.array([1.0, 2.0, -3.0])


def both(fn, *arrays):
    """Run ``fn(m, *leaves)`` for strata and torch with float64 leaves that require grad."""
    out = []
    for m in (strata, torch):
        leaves = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        out.append(fn(m, *leaves))
    return out


def assert_close(s, t):
    if isinstance(t, (list, tuple)):
        assert len(s) == len(t)
        for a, b in zip(s, t):
            assert_close(a, b)
        return
    if t is None:
        assert s is None
        return
    if isinstance(t, torch.Tensor):
        np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        return
    assert s == t


def check_error(fn, *arrays, match):
    """Both libraries raise the same exception class for ``fn(m, *leaves)`` (float64 leaves that
    require grad), strata's message matches, and the leaves' values are unchanged."""
    errors = []
    for m in (torch, strata):
        leaves = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        with pytest.raises(Exception) as err:
            fn(m, *leaves)
        errors.append(err.value)
        for leaf, a in zip(leaves, arrays):
            np.testing.assert_array_equal(leaf.detach().numpy(), a)
    t_err, s_err = errors
    assert isinstance(s_err, type(t_err)), f"strata raised {s_err!r}, torch {t_err!r}"
    assert re.search(match, str(s_err)), f"{s_err!r} does not match {match!r}"


def grads_of(fn):
    """``fn(m, *leaves)`` runs a backward; compare the leaves' .grad."""
    def run(m, *leaves):
        fn(m, *leaves)
        return [x.grad for x in leaves]
    return run


# --- graph structure ----------------------------------------------------------------------------

def test_node_names_next_functions_and_accumulate_grad():
    def fn(m, x, y):
        z = x * y + 2
        add = z.grad_fn
        mul = add.next_functions[0][0]
        acc = mul.next_functions[0][0]
        return (type(add).__name__, add.name(), len(add.next_functions), add.next_functions[1],
                type(mul).__name__, type(acc).__name__, acc.variable is x, x.grad_fn,
                z.is_leaf, x.is_leaf, z.requires_grad)
    s, t = both(fn, A, A)
    assert s == t


def test_accumulate_grad_node_is_shared_while_alive():
    x = strata.ones(3, requires_grad=True)
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def test_saved_tensor_attributes():
    def fn(m, x, y):
        z = x * y
        e = x.exp()
        return (z.grad_fn._saved_self is x, z.grad_fn._saved_other is y,
                e.grad_fn._saved_result is e, e.grad_fn._saved_result.tolist())
    s, t = both(fn, B, B)
    assert s == t


def test_sequence_numbers_increase():
    x = strata.ones(2, requires_grad=True)
    a = x * 2
    b = a + 1
    assert b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr()


# --- backward, accumulation, retain_graph -------------------------------------------------------

def test_grad_accumulates_across_backward_calls():
    s, t = both(grads_of(lambda m, x, y: [(x * y).sum().backward() for _ in range(3)]), A, A)
    assert_close(s, t)


def test_leaf_grads_never_alias():
    x = strata.ones(3, requires_grad=True)
    y = strata.ones(3, requires_grad=True)
    (x + y).sum().backward()
    assert x.grad is not y.grad
    x.grad.add_(1)
    assert y.grad.tolist() == [1.0, 1.0, 1.0]
    g = strata.ones(3)
    w = strata.ones(3, requires_grad=True)
    (w + 1).backward(g)
    w.grad.mul_(5)
    assert g.tolist() == [1.0, 1.0, 1.0]


def test_grad_layout_follows_the_parameter():
    p = strata.zeros(4, 3).t().requires_grad_()
    (p * 2).sum().backward()
    assert p.grad.stride() == p.stride()


def test_second_backward_without_retain_graph_raises():
    def fn(m, x):
        y = (x.exp() * 2).sum()
        y.backward()
        y.backward()
    check_error(fn, A, match="Trying to backward through the graph a second time")


def test_retain_graph_allows_second_backward():
    def fn(m, x):
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
    s, t = both(grads_of(fn), A)
    assert_close(s, t)


def test_freed_saved_tensors_cannot_be_read():
    x = strata.ones(2, requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_result


def test_backward_errors():
    check_error(lambda m, x: (x * 2).backward(), A,
                match="grad can be implicitly created only for scalar outputs")
    check_error(lambda m, x: x.detach().sum().backward(), A,
                match="element 0 of tensors does not require grad and does not have a grad_fn")
    check_error(lambda m, x: (x * 2).backward(m.ones(2)), A, match="Mismatch in shape")


def test_backward_with_gradient_and_inputs():
    def fn(m, x, y):
        z = x * y
        z.backward(m.full((2, 3), 0.5, dtype=m.float64), inputs=[y])
    s, t = both(grads_of(fn), A, A)
    assert_close(s, t)


def test_backward_inputs_non_leaf_gets_grad():
    def fn(m, x):
        h = x * 2
        (h * h).sum().backward(inputs=[h])
        return h.grad, x.grad
    s, t = both(fn, A)
    assert_close(s, t)


def test_autograd_grad_leaves_dot_grad_alone():
    def fn(m, x, y):
        z = (x * y).sum()
        gx, gy = m.autograd.grad(z, (x, y))
        return gx, gy, x.grad
    s, t = both(fn, A, A)
    assert_close(s, t)


def test_autograd_grad_unused_inputs():
    check_error(lambda m, x, y: m.autograd.grad((x * 2).sum(), [x, y]), A, A,
                match="appears to not have been used in the graph")

    def fn(m, x, y):
        return (m.autograd.grad((x * 2).sum(), [x, y], allow_unused=True),
                m.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True))
    s, t = both(fn, A, A)
    assert_close(s, t)


def test_autograd_grad_of_non_leaf_and_multiple_outputs():
    def fn(m, x):
        h = x.sin()
        out1, out2 = (h * h).sum(), h.exp().sum()
        return m.autograd.grad([out1, out2], [h, x])
    s, t = both(fn, A)
    assert_close(s, t)


def test_create_graph_double_backward():
    def fn(m, x):
        y = (x ** 3 * x.sin()).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad((g * g).sum(), x)
        return g, g2
    s, t = both(fn, A)
    assert_close(s, t)


def test_create_graph_backward_makes_differentiable_grad():
    def fn(m, x):
        (x.exp() * x).sum().backward(create_graph=True)
        first = x.grad
        x.grad.sum().backward()
        return first.requires_grad, x.grad
    s, t = both(fn, B)
    assert_close(s, t)


def test_third_derivative():
    def fn(m, x):
        y = x.tanh().sum()
        g1, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = m.autograd.grad(g2.sum(), x)
        return g3
    s, t = both(fn, B)
    assert_close(s, t)


def test_double_backward_through_view_formulas_and_copy_slices():
    """View gradients scatter into zeros with an in-place copy; with create_graph that copy is
    itself recorded (CopySlices), so second derivatives flow through it."""
    def views(m, x):
        y = (x[0] ** 3).sum() + (x[:, 1:] ** 2).sum() + x.diagonal().exp().sum() + \
            x.unfold(1, 2, 1).pow(3).sum() + (x.as_strided((2, 2), (1, 3), 1) ** 3).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        return g, m.autograd.grad((g * g).sum(), x)[0]

    def writes(m, x):
        y = x.clone()
        y[0] = y[1] * 2
        y[:, 1].mul_(y[:, 2].clone())
        y[1:, 2] += x[0, 1:2]
        g, = m.autograd.grad((y ** 2).sum(), x, create_graph=True)
        return g, m.autograd.grad(g.sum(), x)[0]

    for fn in (views, writes):
        s, t = both(fn, A)
        assert_close(s, t)


def test_diamond_graph_sums_both_paths():
    def fn(m, x):
        a = x * 2
        b, c = a.sin(), a.cos()
        (b * c + a).sum().backward()
    s, t = both(grads_of(fn), A)
    assert_close(s, t)


# --- hooks ---------------------------------------------------------------------------------------

def _hook_log(m, a):
    log = []
    b = a * 2
    c = b * 3
    b.retain_grad()
    b.register_hook(lambda g: (log.append(("tensor", g.tolist())), g * 10)[1])
    b.grad_fn.register_prehook(lambda go: (log.append(("pre", go[0].tolist())),
                                           (go[0] * 100,))[1])
    b.grad_fn.register_hook(lambda gi, go: log.append(
        ("post", [x.tolist() if x is not None else None for x in gi], go[0].tolist())))
    a.register_post_accumulate_grad_hook(lambda p: log.append(("post_acc", p.grad.tolist())))
    a.register_hook(lambda g: log.append(("leaf", g.tolist())))
    c.sum().backward()
    return log, b.grad, a.grad


def test_hook_order_matches_torch():
    s, t = both(_hook_log, B)
    assert s[0] == t[0]
    assert_close(s[1:], t[1:])


def test_hook_handle_remove_and_replacement():
    def fn(m, x):
        y = x * 2
        h1 = y.register_hook(lambda g: g * 3)
        y.register_hook(lambda g: g + 1)
        h1.remove()
        y.sum().backward()
    s, t = both(grads_of(fn), B)
    assert_close(s, t)


def test_hook_errors():
    check_error(lambda m, x: x.detach().register_hook(lambda g: g), A,
                match="cannot register a hook on a tensor that doesn't require gradient")
    check_error(lambda m, x: (x * 2).register_post_accumulate_grad_hook(lambda p: None), A,
                match="post accumulate grad hooks cannot be registered on non-leaf tensors")


def test_non_leaf_grad_warns_and_retain_grad_fills_it():
    def fn(m, x):
        y = x * x
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert y.grad is None
        z = x * 3
        z.retain_grad()
        (y + z).sum().backward()
        return str(caught[0].message)[:60], z.retains_grad, z.grad
    s, t = both(fn, B)
    assert_close(s, t)


def test_autograd_grad_fires_tensor_hooks_of_inputs():
    seen = []
    x = strata.ones(2, requires_grad=True)
    x.register_hook(lambda g: seen.append(g.tolist()))
    strata.autograd.grad((x * 3).sum(), x)
    assert seen == [[3.0, 3.0]]


# --- in-place and views --------------------------------------------------------------------------

def test_inplace_leaf_errors():
    check_error(lambda m, x: x.mul_(2), A,
                match="a leaf Variable that requires grad is being used in an in-place operation.")
    check_error(lambda m, x: x[0].mul_(2), A,
                match="a view of a leaf Variable that requires grad is being used in an in-place")


def test_inplace_on_leaf_allowed_under_no_grad():
    def fn(m, x):
        with m.no_grad():
            x.mul_(2)
        (x * x).sum().backward()
        return x._version, x.grad
    s, t = both(fn, A)
    assert_close(s, t)


def test_inplace_rebases_history():
    def fn(m, x):
        y = x.clone()
        y.mul_(x)
        y.exp_()
        y.sum().backward()
        return type(y.grad_fn).__name__, x.grad
    s, t = both(fn, A)
    assert_close(s, t)


def test_copy_slices_setitem_and_view_inplace():
    def fn(m, x, v):
        y = x.clone()
        y[:, 0].mul_(2)
        y[1] = v
        y[0, 1:] += v[:2]
        (y * y).sum().backward()
        return type(y.grad_fn).__name__, x.grad, v.grad
    s, t = both(fn, A, B)
    assert_close(s, t)


def test_write_into_zeros_with_graph():
    def fn(m, w):
        out = m.zeros(3, 3, dtype=m.float64)
        for i in range(3):
            out[i] = w * (i + 1)
        out.sum().backward()
        return out.is_leaf, type(out.grad_fn).__name__, w.grad
    s, t = both(fn, B)
    assert_close(s, t)


def test_stale_view_sees_new_history_of_its_base():
    def fn(m, w):
        base = m.zeros(4, dtype=m.float64)
        view = base[1:3]
        base[2:].copy_(w[:2] * 3)   # the base gains history after the view was made
        name = type(view.grad_fn).__name__
        (view * view).sum().backward()
        return view.requires_grad, name, w.grad
    s, t = both(fn, B)
    assert_close(s, t)


def test_view_made_in_no_grad_cannot_be_written_in_grad_mode():
    def fn(m, x):
        y = x * 1
        with m.no_grad():
            v = y[:1]
        v.mul_(2)
    check_error(fn, A, match="A view was created in no_grad mode")


def test_saved_tensor_modified_in_place():
    check_error(lambda m, x: _exp_then_add(m, x), B,
                match=r"one of the variables needed for gradient computation has been modified "
                      r"by an inplace operation: \[torch.DoubleTensor \[3\]\], which is output 0 "
                      r"of Exp, is at version 1; expected version 0 instead. Hint: enable anomaly")
    check_error(lambda m, x: _sin_of_modified(m, x), B,
                match=r"\[torch.DoubleTensor \[3\]\], which is output 0 of Add, is at version 1")
    check_error(_view_written_after_save, A,
                match=r"\[torch.DoubleTensor \[2\]\], which is output 0 of AsStrided, is at "
                      r"version 2; expected version 1")


def _view_written_after_save(m, x):
    y = x.clone()
    y[0] = y[1] * 2
    y[:, 1].mul_(y[:, 2])     # mul_ saves y[:, 2], which the write itself then changes
    (y ** 2).sum().backward()


def _exp_then_add(m, x):
    y = (x * 1).exp()
    y.add_(1)
    y.sum().backward()


def _sin_of_modified(m, x):
    a = x.exp()
    b = a.sin()
    a.add_(1)
    b.sum().backward()


def test_data_and_detach():
    def fn(m, x):
        y = x.sin()
        x.data.add_(1)          # .data has its own version counter: no error later
        d = x.detach()
        y.sum().backward()
        return (d.requires_grad, d._is_view(), d._version == x._version, x.grad,
                x.data.requires_grad)
    s, t = both(fn, B)
    assert_close(s, t)


def test_detach_inplace():
    def fn(m, x):
        y = x * 2
        y.detach_()
        return y.requires_grad, y.is_leaf, y.grad_fn
    s, t = both(fn, B)
    assert s == t


def test_version_counter_shared_by_views():
    x = strata.zeros(4)
    v = x[1:]
    v.add_(1)
    assert x._version == v._version == 1


# --- grad modes -----------------------------------------------------------------------------------

def test_no_grad_enable_grad_set_grad_enabled():
    def fn(m, x):
        out = []
        with m.no_grad():
            out.append((x * 2).requires_grad)
            with m.enable_grad():
                out.append((x * 2).requires_grad)
            out.append(m.is_grad_enabled())
        m.set_grad_enabled(False)
        out.append((x * 2).requires_grad)
        m.set_grad_enabled(True)
        with m.set_grad_enabled(False):
            out.append(m.is_grad_enabled())
        out.append(m.is_grad_enabled())

        @m.no_grad()
        def decorated():
            return (x * 2).requires_grad
        out.append(decorated())
        return out
    s, t = both(fn, B)
    assert s == t


def test_grad_mode_is_thread_local():
    seen = []
    with strata.no_grad():
        t = threading.Thread(target=lambda: seen.append(strata.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_inference_mode():
    def fn(m, x):
        normal = m.ones(3, dtype=m.float64)
        with m.inference_mode():
            inf = m.ones(3, dtype=m.float64) * 2
            y = x * 2
            normal.add_(1)      # normal tensors still count versions inside the mode
            state = (m.is_inference_mode_enabled(), m.is_grad_enabled(), inf.is_inference(),
                     y.requires_grad, normal.is_inference(), normal._version)
        return state, m.is_inference_mode_enabled(), (x + inf).requires_grad
    s, t = both(fn, B)
    assert s == t


def test_inference_tensor_errors():
    def inplace_outside(m, x):
        with m.inference_mode():
            t = m.ones(3)
        t.add_(1)

    def saved_for_backward(m, x):
        with m.inference_mode():
            t = m.ones(3, dtype=m.float64)
        (x * t).sum()

    def read_version(m, x):
        with m.inference_mode():
            t = m.ones(3)
        return t._version

    check_error(inplace_outside, B, match="Inplace update to inference tensor outside "
                                          "InferenceMode is not allowed")
    check_error(saved_for_backward, B, match="Inference tensors cannot be saved for backward")
    check_error(read_version, B, match="Inference tensors do not track version counter")


def test_requires_grad_flags():
    check_error(lambda m, x: m.ones(2, dtype=m.int64).requires_grad_(), A,
                match="only Tensors of floating point")
    check_error(lambda m, x: (x * 2).requires_grad_(False), A,
                match="you can only change requires_grad flags of leaf variables")


# --- no-grad fast path ----------------------------------------------------------------------------

def test_no_grad_path_creates_no_autograd_state():
    x, y = strata.ones(3), strata.ones(3)
    z = x + y
    assert z._ag is None and z.grad_fn is None and not z.requires_grad
    p = strata.ones(3, requires_grad=True)
    with strata.no_grad():
        q = p * 2
    assert q._ag is None


@given(st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_broadcast_gradients_sum_back(shape, ones):
    """Gradients of broadcast binary ops sum back to each input's shape, as in PyTorch."""
    other = [1 if o else s for s, o in zip(shape, ones)]
    rng = np.random.default_rng(len(shape))
    a, b = rng.standard_normal(shape), rng.standard_normal(other[len(other) // 2:])
    s, t = both(grads_of(lambda m, x, y: ((x * y + x / (y * y + 1)) - y).sum().backward()), a, b)
    assert_close(s, t)


# --- the derivative registry ----------------------------------------------------------------------

# Differentiable primitive ops with no formula: backward through them raises.
NO_FORMULA = {
    "aten::heaviside": "no formula in PyTorch either (a NotImplemented node)",
    "aten::bernoulli.p": "no formula in PyTorch either",
    "aten::multinomial": "integer output",
    "aten::_unique2": "no formula in PyTorch either",
    "aten::unique_dim": "no formula in PyTorch either",
    "aten::unique_consecutive": "no formula in PyTorch either",
    "aten::bincount": "no formula in PyTorch either",
    "aten::geqrf": "no formula in PyTorch either",
    "aten::histogram.bin_ct": "no formula in PyTorch either (its backward raises)",
    "aten::histogram.bins_tensor": "no formula in PyTorch either (its backward raises)",
    "aten::_sample_dirichlet": "no formula in PyTorch either",
    "aten::binomial": "no formula in PyTorch either",
    "aten::to_dense": "sparse tensors are out of autograd's scope here",
    "aten::to_sparse.sparse_dim": "sparse tensors are out of autograd's scope here",
    "aten::coalesce": "sparse tensors are out of autograd's scope here",
    "aten::sparse_mask": "sparse tensors are out of autograd's scope here",
    "aten::_thnn_fused_lstm_cell_backward_impl": "no formula in PyTorch either (double backward "
                                                 "through a fused cell raises)",
    "aten::_thnn_fused_gru_cell_backward": "no formula in PyTorch either (double backward "
                                           "through a fused cell raises)",
    "aten::_lstm_layer_backward": "double backward through a whole layer raises, as through "
                                  "cuDNN's RNN",
    "aten::_gru_layer_backward": "double backward through a whole layer raises, as through "
                                 "cuDNN's RNN",
}


def test_registry_lists_primitives_without_a_formula():
    """Every aten primitive with tensor inputs has a formula, is declared non-differentiable,
    or is listed above (an in-place op counts as its out-of-place op)."""
    missing = []
    for qualname, op in REGISTRY.items():
        if not qualname.startswith("aten::") or op.decomposition is not None or op.meta is None:
            continue
        if not (op.tensor_positions or op.tensorlist_positions):   # factories
            continue
        if DV.lookup(op) is not None:
            continue
        functional = DV.out_of_place(op) if op.is_inplace else None
        if (functional.qualname if functional is not None else qualname) not in NO_FORMULA:
            missing.append(qualname)
    assert not missing, f"primitive ops without a derivative formula: {sorted(missing)}"


def test_missing_formula_raises_at_backward():
    """An op with float outputs and no formula (here a user op) still gets a node; backward
    through it raises naming the op."""
    from strata.library import Library
    lib = Library("no_formula_ns", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: strata.ops.aten.mul.Tensor(x, 2), "CPU")
        x = strata.ones(3, requires_grad=True)
        y = strata.ops.no_formula_ns.twice.default(x)
        assert y.grad_fn.name() == "NotImplemented"
        with pytest.raises(NotImplementedError, match="derivative for no_formula_ns::twice is "
                                                      "not implemented"):
            y.sum().backward()
    finally:
        lib._destroy()


def test_atan2_gradient_at_the_origin_matches_torch():
    """ATen zeroes the infinite reciprocal of r^2: (+-)0 gradients at (0, 0), not NaN."""
    grads = []
    for m in (strata, torch):
        a = m.tensor([0.0, 1.0, 0.0, 0.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([0.0, 2.0, 0.0, -0.0], dtype=m.float64, requires_grad=True)
        m.atan2(a, b).backward(m.tensor([1.0, 1.0, math.inf, 1.0], dtype=m.float64))
        grads.append([a.grad.numpy(), b.grad.numpy()])
    for got, want in zip(*grads):
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
