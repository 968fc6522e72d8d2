"""Note [Tensor mixins]: Tensor's hand-written methods live in mixin classes, yet they are
Tensor's: named ``Tensor.<name>`` (the tracer names a call's frontend entry point by its code's
qualname) and never replaced by the methods ``bind_methods`` generates from ops."""

import io

import pytest

import strata
from strata import _tensor
from strata.ops.op import REGISTRY

MIXINS = _tensor._MIXINS


def _functions(member):
    parts = (member.fget, member.fset) if isinstance(member, property) else (member,)
    return [fn for fn in parts if hasattr(fn, "__code__")]


def _innermost(fn):
    """The function whose frame calls the op (``__eq__``'s NumPy-operand wrapper calls it)."""
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


@pytest.mark.parametrize("mixin", MIXINS, ids=lambda m: m.__name__)
def test_mixin_methods_are_named_as_tensor_methods(mixin):
    for name, member in vars(mixin).items():
        for fn in _functions(member):
            assert fn.__qualname__.startswith("Tensor."), (name, fn.__qualname__)
            code = _innermost(fn).__code__
            assert code.co_qualname.startswith("Tensor."), (name, code)


@pytest.mark.parametrize("mixin", MIXINS, ids=lambda m: m.__name__)
def test_mixins_add_no_instance_state(mixin):
    assert mixin.__slots__ == ()
    assert strata.Tensor.__mro__.index(mixin) < strata.Tensor.__mro__.index(_tensor.TensorImpl)


def test_generated_methods_do_not_replace_hand_written_ones():
    written = {name: mixin for mixin in MIXINS for name in vars(mixin)}
    shadowed = [op.method for op in REGISTRY.values() if op.method in written]
    assert shadowed, "no op declares a method the mixins write by hand: the test checks nothing"
    for name in shadowed:
        mixin = written[name]
        assert name not in vars(strata.Tensor), f"Tensor.{name} replaces {mixin.__name__}'s"
        assert getattr(strata.Tensor, name) is getattr(mixin, name)


def test_explain_names_a_mixin_method_as_tensor_method():
    ex = strata.explain("z = x.view(6)", file=io.StringIO())   # x: a 2x3 tensor
    assert "[call from Tensor.view]" in ex.text
