"""The dispatcher: key sets, registration priority, fallthrough, TLS include/exclude, kernel
caching, the Library API (custom ops and a user-defined device), dispatch modes and the trace."""

import io
import itertools

import numpy as np
import pytest
import strata
from strata.dispatch import DispatchKey, keys
from strata.dispatch.tls import exclude_keys, include_keys
from strata.library import Library

_ids = itertools.count()


@pytest.fixture
def lib():
    """A fresh namespace per test, torn down afterwards."""
    ns = f"test_ns{next(_ids)}"
    library = Library(ns, "DEF")
    yield library
    library._destroy()


def op_of(library, name):
    return getattr(getattr(strata.ops, library.ns), name).default


def test_cpu_tensor_keyset_is_backend_plus_autograd_and_inplace_or_view():
    x = strata.ones(2)
    ks = strata.dispatch.keyset(x)
    names = [k.name for k in keys.keys_in(ks)]
    assert names == ["AutogradCPU", "ADInplaceOrView", "CPU"]
    assert keys.highest_key(ks) is DispatchKey.AutogradCPU


def test_per_backend_functionality_picks_highest_backend():
    ks = keys.backend_keyset("CPU") | keys.backend_keyset("Meta")
    assert keys.highest_key(ks) is DispatchKey.AutogradMeta
    below = keys.after(ks, DispatchKey.AutogradMeta)
    assert keys.highest_key(below) is DispatchKey.ADInplaceOrView
    assert keys.highest_key(keys.after(below, DispatchKey.ADInplaceOrView)) is DispatchKey.Meta


def test_backend_kernel_beats_composite_explicit_beats_implicit(lib):
    lib.define("f(Tensor x) -> Tensor")
    calls = []
    lib.impl("f", lambda x: calls.append("CIA") or x, "CompositeImplicitAutograd")
    op = op_of(lib, "f")
    op(strata.ones(1))
    lib.impl("f", lambda x: calls.append("CEA") or x, "CompositeExplicitAutograd")
    op(strata.ones(1))          # the cache was invalidated by the registration
    lib.impl("f", lambda x: calls.append("CPU") or x, "CPU")
    op(strata.ones(1))
    op(strata.ones(1, device="meta"))  # Meta has no kernel of its own: CEA covers backends
    assert calls == ["CIA", "CEA", "CPU", "CEA"]


def test_composite_implicit_serves_autograd_only_without_backend_kernel(lib):
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x, "CompositeImplicitAutograd")
    op = op_of(lib, "g")
    assert strata.dispatch.resolve_key(op, DispatchKey.AutogradCPU).source == \
        "CompositeImplicitAutograd"
    lib.impl("g", lambda x: x, "CPU")
    kernel = strata.dispatch.resolve_key(op, DispatchKey.AutogradCPU)
    assert kernel is None or kernel.source != "CompositeImplicitAutograd"


def test_registering_the_same_cell_twice_is_an_error(lib):
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("h", lambda x: x, "CPU")
    with pytest.raises(RuntimeError, match="already registered"):
        lib.impl("h", lambda x: x, "CPU")


def test_fallthrough_skips_a_key(lib):
    lib.define("k(Tensor x) -> Tensor")
    seen = []
    lib.impl("k", lambda x: seen.append("cpu") or x, "CPU")
    op = op_of(lib, "k")
    lib.impl("k", strata.library.fallthrough_kernel, "AutogradCPU")
    op(strata.ones(1))
    assert seen == ["cpu"]
    assert "fallthrough" in strata.dispatch.dump(op, file=io.StringIO())


def test_tls_include_routes_every_op_through_a_fallback():
    seen = []

    def spy(op, ks, args):
        seen.append(op.name)
        return strata.dispatch.dispatcher.redispatch(op, ks, args)

    strata.dispatch.register_fallback("Functionalize", spy)
    try:
        x = strata.ones(2)
        x + x                           # Functionalize is not in the tensors' key set
        assert seen == []
        with include_keys(DispatchKey.Functionalize.keyset):
            x + x
            x * 2
        assert seen == ["add.Tensor", "mul.Tensor"]
    finally:
        strata.dispatch.dispatcher.deregister_fallback("Functionalize")


def test_tls_exclude_removes_keys(lib):
    lib.define("e(Tensor x) -> Tensor")
    seen = []
    lib.impl("e", lambda x: seen.append("cpu") or x, "CPU")
    lib.impl("e", lambda x: seen.append("meta") or x, "Meta")
    op = op_of(lib, "e")
    with include_keys(DispatchKey.Meta.keyset):
        op(strata.ones(1))        # Meta is the highest backend bit: it wins
    meta_backend_bit = 1 << keys.backend_index("Meta")
    with include_keys(DispatchKey.Meta.keyset), exclude_keys(meta_backend_bit):
        op(strata.ones(1))
    assert seen == ["meta", "cpu"]


def test_kernel_choice_is_cached_per_keyset(lib):
    lib.define("c(Tensor x) -> Tensor")
    lib.impl("c", lambda x: x, "CPU")
    op = op_of(lib, "c")
    op._dispatch_cache.clear()
    op(strata.ones(1))
    assert strata.dispatch.keyset(strata.ones(1)) in op._dispatch_cache
    lib.impl("c", lambda x: x, "Meta")
    assert not op._dispatch_cache   # registration invalidates


def test_custom_op_schema_binding_and_missing_kernel(lib):
    lib.define("scale(Tensor x, float factor=2.0, *, bool negate=False) -> Tensor")
    lib.impl("scale", lambda x, factor, negate: x * (-factor if negate else factor), "CPU")
    op = getattr(strata.ops, lib.ns).scale
    x = strata.tensor([1.0, 2.0])
    assert op(x).tolist() == [2.0, 4.0]
    assert op(x, 3.0, negate=True).tolist() == [-3.0, -6.0]
    assert op(x, factor=0.5).tolist() == [0.5, 1.0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        op(x, bogus=1)
    with pytest.raises(NotImplementedError, match=f"Could not run '{lib.ns}::scale' with "
                                                  "arguments from the 'Meta' backend"):
        op(strata.ones(2, device="meta"))
    assert str(op.default.schema) == \
        f"{lib.ns}::scale(Tensor x, float factor=2.0, *, bool negate=False) -> Tensor"


def test_composite_custom_op_decomposes_and_runs_everywhere(lib):
    lib.define("softsign2(Tensor x) -> Tensor")
    lib.impl("softsign2", lambda x: x / (1 + x.abs()), "CompositeImplicitAutograd")
    op = op_of(lib, "softsign2")
    np.testing.assert_allclose(op(strata.tensor([1.0, -3.0])).numpy(), [0.5, -0.75])
    assert op(strata.ones(4, 2, device="meta")).shape == (4, 2)


def test_mixed_devices_raise_pytorch_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        strata.ones(2) + strata.ones(2, device="meta")
    # zero-dim CPU tensors are exempt, as in PyTorch
    out = strata.ones(2, device="meta") + strata.tensor(1.0)
    assert out.device.type == "meta"


def test_dispatch_mode_sees_every_op_after_decomposition():
    seen = []

    class Log(strata.dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.name)
            return func(*args, **(kwargs or {}))

    x = strata.ones(2, 3)
    with Log():
        y = (x + 1).flatten()       # flatten is composite: the mode sees view
    assert seen == ["add.Tensor", "view"]
    assert y.shape == (6,)
    x + 1                            # the mode is gone
    assert seen == ["add.Tensor", "view"]


def test_dispatch_mode_can_change_results():
    class Double(strata.dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func.name == "add.Tensor" else out

    with Double():
        z = strata.ones(2) + 1
    assert z.tolist() == [4.0, 4.0]


def test_show_trace_prints_calls_with_keysets():
    buf = io.StringIO()
    x = strata.ones(2)
    with strata.dispatch.show_trace(file=buf):
        x + x
    text = buf.getvalue()
    assert "op=[aten::add.Tensor]" in text
    assert "AutogradCPU" in text and "CPU" in text
    x + x
    assert buf.getvalue() == text   # off again


def test_dump_lists_every_runtime_key():
    text = strata.dispatch.dump("add.Tensor", file=io.StringIO())
    for name in ("CPU", "Meta", "AutogradCPU", "ADInplaceOrView", "Python"):
        assert f"  {name} " in text


def test_user_defined_device_end_to_end():
    from strata.utils import backend_registration as br
    br.rename_privateuse1_backend("foo")
    lib = Library("aten", "IMPL")
    calls = []

    def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        return br.tensor_from_array(np.zeros(size, (dtype or strata.float32).np), device)

    def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
        return empty(size, dtype, device=device)

    def copy_(self, src, non_blocking=False):
        calls.append("copy_")
        src_arr = br.array_of(src)
        br.array_of(self)[...] = src_arr
        return self

    def add(self, other, alpha=1):
        calls.append("add")
        return br.tensor_from_array(br.array_of(self) + alpha * br.array_of(other), self.device)

    try:
        lib.impl("empty.memory_format", empty, "PrivateUse1")
        lib.impl("empty_strided", empty_strided, "PrivateUse1")
        lib.impl("copy_", copy_, "PrivateUse1")
        lib.impl("add.Tensor", add, "PrivateUse1")
        x = strata.tensor([1.0, 2.0]).to("foo")
        assert x.device == strata.device("foo")
        y = x + x
        assert y.device.type == "foo"
        assert calls == ["copy_", "add"]
        assert y.to("cpu").tolist() == [2.0, 4.0]  # foo->cpu: the higher backend (foo) copies
        assert calls[-1] == "copy_"
        with pytest.raises(NotImplementedError, match="'PrivateUse1' backend"):
            x * x
    finally:
        lib._destroy()


def test_factory_ops_dispatch_on_their_device_argument():
    assert strata.zeros(2, device="meta").device.type == "meta"
    assert strata.zeros(2).device.type == "cpu"
    with strata.device("meta"):
        assert strata.ones(3).device.type == "meta"
