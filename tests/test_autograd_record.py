"""The autograd record's one-frame path (Note [One-frame record], ``autograd/kernel.py``) gives
the graph, saved values and gradients PyTorch gives, for each kind of input it distinguishes:
plain tensors, views, tensor lists, optional tensors, non-tensor arguments, in-place writes and
multi-output ops."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.autograd.graph import Node
from strata.autograd.kernel import OpNode


def _name(node):
    """The node's name; PyTorch's ``TBackward0`` as strata's: strata's ``t`` is a composite of
    ``transpose`` (a known difference, docs/performance.md)."""
    if node is None:
        return None
    name = node.name().removeprefix("torch::autograd::")
    return "TransposeBackward0" if name == "TBackward0" else name


def _names(fn):
    return [_name(n) for n, _ in fn.next_functions]


CASES = {
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2),
    "mul_saves_both": lambda m, a, b: a * b,
    "view_input": lambda m, a, b: a.transpose(0, 1) @ b,
    "tensor_list": lambda m, a, b: m.cat([a, b * 2], 0),
    "optional_none": lambda m, a, b: m.nn.functional.linear(a, b, None),
    "linear_bias": lambda m, a, b: m.nn.functional.linear(a, b, b[0]),
    "optional_tensor_none": lambda m, a, b: m.nn.functional.layer_norm(a, (a.shape[1],), b[0]),
    "inplace_non_leaf": lambda m, a, b: (a * 1).mul_(b),
    "inplace_on_view": lambda m, a, b: _write_view(a * 1, b),
    "multi_output": lambda m, a, b: m.max(a + b, 1)[0],   # values and indices
}


def _write_view(base, b):
    base[0].add_(b[0])
    return base


@settings(max_examples=20, deadline=None)
@given(case=st.sampled_from(sorted(CASES)), n=st.integers(1, 4),
       grads=st.sampled_from([(0,), (1,), (0, 1)]), seed=st.integers(0, 2**16))
def test_recorded_graph_and_gradients_match_torch(case, n, grads, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, n)).astype(np.float32) for _ in range(2)]
    results = []
    for m in (strata, torch):
        ts = [m.tensor(a, requires_grad=i in grads) for i, a in enumerate(arrays)]
        out = CASES[case](m, *ts)
        names = (_name(out.grad_fn), _names(out.grad_fn))
        out.sum().backward()
        results.append((out.detach().numpy(), names, [t.grad for t in ts]))
    (s_out, s_names, s_grads), (t_out, t_names, t_grads) = results
    np.testing.assert_allclose(s_out, t_out, rtol=1e-5, atol=1e-5)
    assert s_names == t_names
    for sg, tg in zip(s_grads, t_grads):
        assert (sg is None) == (tg is None)
        if sg is not None:
            np.testing.assert_allclose(sg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)


def test_a_recorded_node_has_every_slot_set():
    """OpNode.__init__ sets Node's slots itself (one frame per record), so it must set all."""
    x = strata.ones(2, requires_grad=True)
    node = (x * x).grad_fn
    assert isinstance(node, OpNode)
    slots = [s for cls in (Node, OpNode) for s in cls.__slots__ if s != "__weakref__"]
    for slot in slots:
        getattr(node, slot)   # an unset slot raises AttributeError
    assert node._seq > x.exp().grad_fn._seq - 2 and node.metadata == {}


def test_saved_tensors_and_version_check_as_in_torch():
    for m in (strata, torch):
        a = m.ones(3, requires_grad=True)
        b = m.full((3,), 2.0)
        out = a * b
        assert out.grad_fn._saved_other is not None
        b.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_leaf_in_place_refused_before_any_state_changes():
    for m in (strata, torch):
        a = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            a.mul_(2)
        assert a.grad_fn is None and a.tolist() == [1.0, 1.0, 1.0] and a._version == 0
