"""strata.explain and ``strata explain``: the path of one line through the layers, as a tree."""

import io
import os
import re
import subprocess
import sys

import pytest
import strata
from strata.core import trace
from strata.dispatch import dispatcher
from strata.ops.op import OpOverload


def _explain(*args, **kwargs):
    buf = io.StringIO()
    ex = strata.explain(*args, file=buf, **kwargs)
    assert buf.getvalue().rstrip("\n") == ex.text
    return ex


def _find(node, layer, pred=lambda ev: True):
    return [n for n in node.walk() if n.event.layer == layer and pred(n.event)]


def _call_of(root, qualname):
    (call,) = _find(root, "dispatch", lambda ev: ev.name == qualname
                    and ev.fields["kind"] == "call")
    return call


def test_z_equals_x_plus_y_on_cpu():
    ex = _explain("z = x + y")
    assert ex.layers == ["frontend", "dispatch", "autograd", "kernel", "runtime"]
    root = ex.roots[0]
    assert root.event.layer == "frontend" and root.event.name == "z = x + y"
    call = _call_of(root, "aten::add.Tensor")
    assert call.parent is root
    assert call.event.fields["caller"] == "Tensor.__add__"
    assert call.event.fields["key"] == "AutogradCPU"
    (no_node,) = _find(call, "autograd")
    assert no_node.event.fields["reason"] == "no input requires grad"
    (redispatch,) = [n for n in call.children if n.event.layer == "dispatch"]
    assert redispatch.event.fields["kind"] == "redispatch"
    assert redispatch.event.fields["key"] == "CPU"
    (kernel,) = redispatch.children
    assert kernel.event.layer == "kernel"
    assert kernel.event.fields["outputs"] == ["float32[2, 3]"]
    (alloc,) = _find(kernel, "runtime", lambda ev: ev.name == "alloc")
    assert alloc.event.fields == {"device": "cpu", "nbytes": 24}
    assert root.duration_ns >= call.duration_ns >= redispatch.duration_ns >= kernel.duration_ns
    for text in ("frontend  z = x + y", "aten::add.Tensor [call from Tensor.__add__]",
                 "-> AutogradCPU: strata.autograd.kernel.autograd_kernel",
                 "aten::add.Tensor [redispatch]", "-> float32[2, 3]",
                 "layers: frontend -> dispatch -> autograd -> kernel -> runtime"):
        assert text in ex.text
    assert set(ex.result) >= {"x", "y", "z"} and ex.result["z"].shape == (2, 3)


def test_a_line_where_x_requires_grad_reports_the_node():
    ex = _explain("z = x + y", requires_grad=True)
    call = _call_of(ex.roots[0], "aten::add.Tensor")
    (node,) = _find(call, "autograd")
    assert node.event.name == "node created"
    assert node.event.fields["node"] == "AddBackward0"
    assert node.event.fields["next"] == ["AccumulateGrad", None]
    # The node is recorded before the kernel runs below autograd (PyTorch's order).
    assert call.children.index(node) < [n.event.layer for n in call.children].index("dispatch")
    assert "node created: AddBackward0 (next functions: AccumulateGrad, None)" in ex.text
    assert ex.result["z"].grad_fn.name() == "AddBackward0"


def test_explain_a_callable_with_backward():
    w = strata.ones(3, requires_grad=True)
    ex = _explain(lambda a: (a * 2).sum().backward(), w)
    assert ex.source == "lambda a: (a * 2).sum().backward()"
    assert ex.result is None and w.grad.tolist() == [2.0, 2.0, 2.0]
    (engine,) = _find(ex.roots[0], "autograd", lambda ev: ev.name == "backward")
    ran = [n.event.name for n in engine.children if n.event.layer == "autograd"]
    assert ran[:2] == ["SumBackward0", "MulBackward0"]
    assert "backward node MulBackward0 ran" in ex.text


def test_explain_a_source_line_with_given_tensors_and_an_expression():
    a = strata.tensor([1.0, 2.0])
    ex = _explain("x * y", a, a)
    assert ex.result.tolist() == [1.0, 4.0]
    assert _call_of(ex.roots[0], "aten::mul.Tensor").event.fields["shapes"] == ((2,), (2,))


def test_a_composite_op_shows_its_decomposition():
    ex = _explain("z = x @ y.t()")
    matmul = _call_of(ex.roots[0], "aten::matmul")
    assert "CompositeImplicitAutograd" in str(matmul.event.fields["kernel"])
    assert _call_of(matmul, "aten::mm").parent is matmul


def test_an_error_is_shown_in_the_tree_then_raised():
    buf = io.StringIO()
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        strata.explain("z = x @ y", file=buf)
    text = buf.getvalue()
    assert "raised RuntimeError" in text
    assert "the line raised RuntimeError: mat1 and mat2 shapes cannot be multiplied" in text
    assert not trace.active and OpOverload.__call__ is dispatcher.call


def test_explain_leaves_tracing_off_and_checks_its_arguments():
    _explain("x + y")
    assert not trace.active and OpOverload.__call__ is dispatcher.call
    with pytest.raises(TypeError, match="at most 2 tensors"):
        strata.explain("x", strata.ones(1), strata.ones(1), strata.ones(1), file=False)
    with pytest.raises(ValueError, match="apply to a source line"):
        strata.explain(lambda: None, device="cpu", file=False)
    with pytest.raises(TypeError, match="expected a callable"):
        strata.explain(3, file=False)


def test_explain_an_op_prints_its_row_in_every_table():
    buf = io.StringIO()
    text = strata.explain(strata.ops.aten.add.Tensor, file=buf)
    assert buf.getvalue().rstrip("\n") == text
    assert "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in text
    assert "decomposition: none (a primitive)" in text
    assert "derivative:    AddBackward0" in text
    assert "Python API:    Tensor.add, strata.add" in text
    assert re.search(r"\n    CPU +strata\.backends\.cpu\.\S+ \[kernel\]", text)
    matmul = strata.explain(strata.ops.aten.matmul.default, file=False)
    assert "decomposition: strata.ops.linalg._matmul" in matmul
    assert re.search(r"\n    AutogradCPU +strata\.ops\.linalg\._matmul "
                     r"\[CompositeImplicitAutograd\]", matmul)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "strata", "explain", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_prints_the_tree():
    out = _cli("z = x + y", "--requires-grad", "--shape", "4")
    assert out.returncode == 0, out.stderr
    assert "x: float32[4] on cpu (requires grad)" in out.stdout
    for text in ("frontend  z = x + y", "aten::add.Tensor [call from Tensor.__add__]",
                 "node created: AddBackward0", "-> float32[4]"):
        assert text in out.stdout
    bad = _cli("z = x @ y")
    assert bad.returncode == 1 and "RuntimeError" in bad.stderr


# --- the sim device: every layer down to the device and back -------------------------------------

def _sim():
    sim = pytest.importorskip("strata.sim")
    if not sim.is_available():
        pytest.skip("the sim device cannot run here")
    return sim


def test_z_equals_x_plus_y_on_sim_reaches_the_device():
    _sim()
    ex = _explain("z = x + y", device="sim")
    assert ex.layers == ["frontend", "dispatch", "autograd", "kernel", "runtime", "driver",
                         "device", "sync"]
    root = ex.roots[0]
    call = _call_of(root, "aten::add.Tensor")
    assert call.event.fields["key"] == "AutogradSim"
    (launch,) = _find(call, "runtime", lambda ev: ev.name == "launch")
    assert launch.parent.event.layer == "kernel"
    driver = [n.event.fields.get("name", n.event.name) for n in _find(launch, "driver")]
    assert "submit" in driver and "doorbell" in driver
    (device,) = _find(launch, "device")
    assert device.event.fields["seq"] == launch.event.fields["seq"]
    assert device.event.start_ns >= launch.event.start_ns   # executed after it was queued
    syncs = [r for r in ex.roots if r.event.layer == "sync"]
    assert syncs and "mode" in syncs[0].event.fields
    assert "explain: collect device timings: waited" in ex.text


def test_cli_with_device_sim():
    _sim()
    out = _cli("z = x + y", "--device", "sim")
    assert out.returncode == 0, out.stderr
    for text in ("on sim:0", "launch aten::add.Tensor", "ioctl submit", "doorbell",
                 "layers: frontend -> dispatch -> autograd -> kernel -> runtime -> driver -> "
                 "device -> sync"):
        assert text in out.stdout
