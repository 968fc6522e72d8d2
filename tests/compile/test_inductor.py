"""The inductor backend against PyTorch eager: fused C kernels give eager's answers (NaN, Inf,
-0.0, integer wrap-around, bool), fusion does what Note [Row fusion] says, debug output and the
warm cache of a fresh process."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import config
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

SRC = Path(__file__).resolve().parents[2] / "src"


def _run_both(fn, *arrays, atol=1e-5, rtol=1e-5):
    compiled = strata.compile(lambda *xs: fn(strata, *xs), backend="inductor")
    got = compiled(*(strata.tensor(a) for a in arrays))
    want = fn(torch, *(torch.tensor(a) for a in arrays))
    assert_same(got, want, atol=atol, rtol=rtol)
    return got, want


def _rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


SPECIAL = np.array([[np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.0, -88.0],
                    [100.0, -100.0, 0.5, -0.5, 1e30, -1e30, 2.0, np.nan]], np.float32)

FUNCTIONS = {
    "pointwise_chain": lambda m, x, y: ((x * y + 1.0).relu().exp() - x / (y.abs() + 1)).tanh(),
    "softmax": lambda m, x, y: m.softmax(x * 2, -1) + y,
    "log_softmax": lambda m, x, y: m.log_softmax(x - y, 1),
    "layer_norm": lambda m, x, y: m.nn.functional.layer_norm(x, (x.shape[-1],), y[0], y[1]),
    "gelu_sigmoid": lambda m, x, y: m.nn.functional.gelu(x) * m.sigmoid(y) + m.erf(x),
    "gelu_tanh": lambda m, x, y: m.nn.functional.gelu(x + y, approximate="tanh"),
    "reductions": lambda m, x, y: (x.sum(0) + y.mean(0), x.amax(-1), y.amin(0, keepdim=True)),
    "transpose": lambda m, x, y: (x.t() * 2).sum(-1) + y.t().mean(1),
    "where_compare": lambda m, x, y: m.where(x > y, x - y, y * 3) + (x <= 0).float(),
    "maximum_minimum": lambda m, x, y: m.maximum(x, y) - m.minimum(x, 2 * y),
    "view_expand": lambda m, x, y: x.reshape(-1)[None, :].expand(3, -1).sum(0) + y.reshape(-1),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_matches_torch(name):
    x, y = _rand(6, 8), _rand(6, 8, seed=1)
    if name == "layer_norm":
        y = _rand(2, 8, seed=1)
    _run_both(FUNCTIONS[name], x, y)


@pytest.mark.parametrize("name", ["pointwise_chain", "softmax", "reductions", "where_compare",
                                  "maximum_minimum", "gelu_sigmoid"])
def test_special_values(name):
    """NaN and Inf propagate, max/min propagate NaN, signs of zero survive."""
    got, want = _run_both(FUNCTIONS[name], SPECIAL, SPECIAL[::-1].copy(), atol=1e-6, rtol=1e-5)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = g.numpy(), w.numpy()
        zeros = (w == 0)
        assert np.array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]))


def test_integer_wraparound_and_bool():
    big = np.array([2**62, 2**63 - 1, -2**63, 7, -7, 0], np.int64)
    _run_both(lambda m, a, b: (a + b, a * b, a - b, -a, (a > b), m.where(a < b, a, b)),
              big, big[::-1].copy())


def test_relu_of_negative_zero_and_nan():
    _run_both(lambda m, x: (x.relu(), m.maximum(x, m.zeros_like(x))),
              np.array([-0.0, 0.0, np.nan, -1.0, 2.0], np.float32))


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 5), cols=st.integers(1, 40), dim=st.sampled_from([0, 1, -1]),
       scale=st.sampled_from([1e-3, 1.0, 50.0]))
def test_softmax_chain_hypothesis(rows, cols, dim, scale):
    x = _rand(rows, cols, seed=rows * 41 + cols, scale=scale)
    _run_both(lambda m, a: (m.softmax(a.exp() - 1, dim), m.log_softmax(a * a, dim).sum(dim)), x)


def test_training_step_gradients_match_eager():
    strata.manual_seed(0)
    model = strata.nn.Sequential(strata.nn.Linear(12, 16), strata.nn.GELU(),
                                 strata.nn.LayerNorm(16), strata.nn.Linear(16, 5))
    x, y = strata.randn(8, 12), strata.randint(0, 5, (8,))

    def step(x, y):
        loss = strata.nn.functional.cross_entropy(model(x).softmax(-1).log() * 2, y)
        loss.backward()
        return loss
    compiled = strata.compile(step, backend="inductor")
    loss = compiled(x, y)
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    expected = step(x, y)
    assert abs(float(loss) - float(expected)) < 1e-5
    for p, g in zip(model.parameters(), grads):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), atol=1e-5, rtol=1e-4)


def _compiled(fn, *tensors):
    return compile_fx(make_fx(fn)(*tensors), list(tensors))


def test_softmax_is_one_kernel_of_row_passes():
    """ATen's passes: the max, exp(x - max) once an element into a row array (Note [Row
    arrays]), its sum, the output scaled by 1 / sum; no buffer but the output."""
    x = strata.randn(4, 32)
    run = _compiled(lambda x: strata.softmax(x, -1), x)
    post = run.ir_post_fusion
    assert post.count("kernel") == 1 and "4 node(s) fused" in post
    assert "Reduction(max" in post and "Reduction(sum" in post
    assert post.count("Pointwise") == 2
    kernel = run.output_code[run.output_code.index("void kernel"):]
    assert kernel.count("strata_expf(") == 1 and "_row[32];" in kernel
    assert run.output_code.count("np.empty(") == 1
    expected = torch.softmax(torch.tensor(x.numpy()), -1).numpy()
    np.testing.assert_allclose(run(x)[0].numpy(), expected, rtol=1e-6, atol=1e-7)
    # its input computed first, in the same kernel, row by row: also a row array
    run = _compiled(lambda x: strata.softmax(x * 3.0, -1), x)
    assert run.ir_post_fusion.count("kernel") == 1 and "5 node(s) fused" in run.ir_post_fusion
    assert run.output_code.count("np.empty(") == 1 and run.output_code.count("_row[32];") == 2
    expected = torch.softmax(torch.tensor(x.numpy()) * 3.0, -1).numpy()
    np.testing.assert_allclose(run(x)[0].numpy(), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(4, 32), (2, 3, 32), (1, 5, 32)])
def test_layer_norm_is_one_kernel_of_row_passes(shape):
    """Note [Unit dims]: the keepdim mean and rstd ([..., 1]) join the kernel of the sums
    over the same rows: statistics and output in one kernel, results equal to eager's."""
    x, w, b = strata.randn(*shape), strata.randn(32), strata.randn(32)

    def fn(x, w, b):
        return strata.nn.functional.layer_norm(x, (32,), w, b)
    run = _compiled(fn, x, w, b)
    post = run.ir_post_fusion
    assert post.count("kernel") == 1, post
    np.testing.assert_allclose(run(x, w, b)[0].numpy(), fn(x, w, b).numpy(), atol=1e-6)
    expected = torch.nn.functional.layer_norm(torch.tensor(x.numpy()), (32,),
                                              torch.tensor(w.numpy()), torch.tensor(b.numpy()))
    np.testing.assert_allclose(run(x, w, b)[0].numpy(), expected.numpy(), atol=1e-5)


def test_pointwise_chain_is_one_loop_without_intermediate_buffers():
    x = strata.randn(1000)
    run = _compiled(lambda x: ((x + 1) * 0.5).exp().sin().tanh() - x, x)
    assert run.ir_post_fusion.count("kernel") == 1
    assert run.output_code.count("np.empty(") == 1      # only the output is allocated
    np.testing.assert_allclose(run(x)[0].numpy(),
                               torch.tanh(torch.sin(torch.exp((torch.tensor(x.numpy()) + 1) * .5)))
                               .sub(torch.tensor(x.numpy())).numpy(), atol=1e-6)


def _gelu_mlp_backward_shape(m, h, g, w):
    """A GELU MLP's backward in small: gelu(h) for a product (as the weight gradient's), then,
    past that product, gelu's derivative at the same h times an incoming gradient."""
    act = m.nn.functional.gelu(h)
    product = act @ w
    slope = 0.5 * (1 + m.erf(h * 0.7071067811865476)) + h * m.exp(-0.5 * h * h) * \
        0.3989422804014327
    return product, g * slope


def test_sibling_pointwise_joins_an_earlier_kernel_and_shares_its_loop():
    """Note [Sibling kernels] (graph.py) and Note [Shared row loops] (cprinter.py): the
    derivative reads h as gelu's kernel does, and nothing the product writes, so it joins that
    kernel across the product; both outputs come from one loop over each row, the same
    values as eager and as torch."""
    rng = np.random.default_rng(2)
    h, g, w = (rng.standard_normal(s).astype(np.float32) for s in ((64, 48), (64, 48), (48, 8)))
    tensors = [strata.tensor(a) for a in (h, g, w)]
    run = _compiled(lambda *xs: _gelu_mlp_backward_shape(strata, *xs), *tensors)
    post = run.ir_post_fusion
    assert post.count("Extern") == 1 and post.count("kernel") == 1, post
    kernel = run.output_code[run.output_code.index("void kernel"):]
    assert kernel.count("for (int64_t y") == 1, kernel     # one loop over a row's elements
    got = run(*tensors)
    want = _gelu_mlp_backward_shape(torch, *(torch.tensor(a) for a in (h, g, w)))
    eager = _gelu_mlp_backward_shape(strata, *tensors)
    for a, b, c in zip(got, want, eager):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5, rtol=1e-5)
        np.testing.assert_allclose(a.numpy(), c.numpy(), atol=1e-6, rtol=1e-6)


def test_a_pointwise_reading_a_product_does_not_move_before_it():
    """The sibling rule's limit: a node reading the product's result stays after it."""
    h, w = strata.randn(16, 32), strata.randn(32, 32)

    def fn(h, w):
        first = h.sin()
        product = first @ w
        return product, (h.cos() + product).exp()
    run = _compiled(fn, h, w)
    assert run.ir_post_fusion.count("kernel") == 2, run.ir_post_fusion
    for a, b in zip(run(h, w), fn(h, w)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5, rtol=1e-5)


def _chain(m, x):
    """The benchmark's 11 pointwise ops: sigmoid, log and tanh chained."""
    y = (x * 1.5 + 0.25).sigmoid()
    y = (y * x - 0.5).abs()
    y = (y + 1.0).log() * 0.5
    return (y.tanh() + x).relu() - 0.1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chained_vector_math_runs_in_stages_with_the_same_bits(monkeypatch, dtype):
    """Note [Staged chains] (cstages.py): a chain of vector-math calls runs in blocks, one
    loop per stage, its values between stages in block arrays; every length (vector tails,
    partial blocks, chunks split over threads) gives the one-loop kernel's bits, NaN, infinities
    and signed zeros included, and torch's values to rounding."""
    from strata.compile.inductor import codecache, cstages
    monkeypatch.setattr(codecache, "load", lambda key: None)     # print the kernel anew
    monkeypatch.setattr(codecache, "store", lambda *args: None)
    rng = np.random.default_rng(7)
    for n in (1, 15, 16, 17, 255, 256, 257, 1000, 70001):
        a = (rng.standard_normal(n) * 3).astype(dtype)
        a[:min(n, 5)] = [np.nan, np.inf, -np.inf, -0.0, 0.0][:min(n, 5)]
        x = strata.tensor(a)
        staged = _compiled(lambda x: _chain(strata, x), x)
        assert "x_block" in staged.output_code
        with monkeypatch.context() as off:
            off.setattr(cstages, "STAGE_MIN_CALLS", 99)
            one_loop = _compiled(lambda x: _chain(strata, x), x)
        assert "x_block" not in one_loop.output_code
        first = one_loop(x)[0].numpy()
        for _ in range(4):      # the first calls time the kernel whole, later ones split it
            got = staged(x)[0].numpy()
            np.testing.assert_array_equal(got, first)
        want = _chain(torch, torch.tensor(a)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_unlowered_ops_fall_back_to_eager_kernels():
    run = _compiled(lambda x: strata.sort(x.exp(), 0)[0] * 2, strata.randn(5, 3))
    assert "Fallback(<OpOverload aten::sort" in run.ir_post_fusion


def test_debug_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "compile_debug", True)
    monkeypatch.setattr(config, "compile_debug_dir", str(tmp_path))
    _compiled(lambda x: strata.log_softmax(x, -1), strata.randn(3, 5))
    (folder,) = (tmp_path / "inductor").iterdir()
    assert {p.name for p in folder.iterdir()} == {"ir_pre_fusion.txt", "ir_post_fusion.txt",
                                                  "output_code.py"}
    assert "void kernel" in (folder / "output_code.py").read_text()


FRESH = """
import sys, strata
from strata import config
config.cache_dir = sys.argv[1]
step = strata.compile(lambda x: (x.exp() * 2).softmax(-1).sum(), backend="inductor")
print(float(step(strata.ones(4, 8))))
"""


def test_fresh_process_with_a_warm_cache_builds_nothing(tmp_path):
    """The second process finds every library in the cache and builds nothing: the same files,
    not one replaced (a build writes a new file and renames it over the old one)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    first = subprocess.run([sys.executable, "-c", FRESH, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300, check=False)
    assert first.returncode == 0, first.stderr
    def entries():
        return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
                for p in (tmp_path / "native").iterdir()}
    built = entries()
    assert any(name.startswith("graph_") and name.endswith(".so") for name in built)
    second = subprocess.run([sys.executable, "-c", FRESH, str(tmp_path)], env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert entries() == built


def test_slices_and_reshape_copies():
    _run_both(lambda m, x, y: (x[1:5:2] * 2 + y[:2], (x + 1)[:, 3:].reshape(-1) * 2,
                               x.t()[2:6].sum(0), (x * y)[-3:, ::3]),
              _rand(6, 8), _rand(6, 8, seed=1))


def test_transformer_layer_training_matches_eager():
    """The tiny-GPT block (attention with a causal mask, layer norms, GELU-free MLP), dropout
    off so both sides draw nothing: loss and every gradient as eager's."""
    strata.manual_seed(0)
    layer = strata.nn.TransformerEncoderLayer(16, 2, 32, 0.0, batch_first=True, norm_first=True)
    mask = strata.nn.Transformer.generate_square_subsequent_mask(6)
    x = strata.randn(3, 6, 16)

    def step(x):
        loss = layer(x, src_mask=mask, is_causal=True).pow(2).mean()
        loss.backward()
        return loss
    loss = strata.compile(step, backend="inductor")(x)
    grads = [p.grad.clone() for p in layer.parameters()]
    layer.zero_grad(set_to_none=True)
    assert abs(float(loss) - float(step(x))) < 1e-5
    for p, g in zip(layer.parameters(), grads):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), atol=1e-5, rtol=1e-4)


def test_graph_cache_skips_lowering_and_survives_damage(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    x = strata.randn(6, 9)
    gm = make_fx(lambda x: (strata.softmax(x, -1) * x).sum(0))(x)
    first = compile_fx(gm, [x])
    again = compile_fx(gm, [x])
    assert not first.from_cache and again.from_cache
    assert again.output_code == first.output_code
    np.testing.assert_array_equal(again(x)[0].numpy(), first(x)[0].numpy())
    assert "Reduction(max" in again.ir_post_fusion      # lowered again only when asked
    (entry,) = (tmp_path / "fxgraph").glob("*.json")
    entry.write_text(entry.read_text().replace("softmax", "sofmax").replace("kernel", "kernal"))
    with pytest.warns(RuntimeWarning, match="damaged or does not match"):
        rebuilt = compile_fx(gm, [x])
    assert not rebuilt.from_cache
    np.testing.assert_array_equal(rebuilt(x)[0].numpy(), first(x)[0].numpy())
    assert compile_fx(gm, [x]).from_cache


def test_integer_division_by_zero_raises_as_eager():
    a, b = np.array([7, -7, 3], np.int64), np.array([2, 0, -2], np.int64)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.tensor(a) // torch.tensor(b)
    compiled = strata.compile(lambda x, y: (x + 1) // y, backend="inductor")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        compiled(strata.tensor(a), strata.tensor(b))
    b[1] = 3
    _run_both(lambda m, x, y: ((x + 1) // y, m.div(x, y, rounding_mode="trunc")), a, b)


def test_no_c_compiler_runs_the_aten_graph_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "c_compiler", "no-such-cc")
    x = strata.randn(3, 4)
    with pytest.warns(RuntimeWarning, match="could not build its kernels"):
        run = _compiled(lambda x: strata.log_softmax(x * 2, -1), x)
    np.testing.assert_allclose(run(x)[0].numpy(), strata.log_softmax(x * 2, -1).numpy(),
                               atol=1e-6)


def test_half_and_bfloat16_casts_inside_a_float32_graph():
    """Conversions to and from the half types in one graph (test_inductor_half.py has more)."""
    x = _rand(4, 6)
    _run_both(lambda m, a: ((a.half() * 2).exp().float() + a.bfloat16().float()).softmax(-1), x,
              atol=1e-2, rtol=1e-2)


def test_a_graph_refuses_inputs_of_another_shape():
    run = _compiled(lambda x: x.exp() + 1, strata.randn(3, 4))
    with pytest.raises(RuntimeError, match=r"input of shape \[3, 4\], got \[5, 4\]"):
        run(strata.randn(5, 4))


def test_an_input_in_other_strides_than_compiled_is_viewed_from_its_laid_out_copy():
    """A backward reads its saved ``t`` (a transposed bfloat16 weight: strides (1, 4) in the
    meta) through a view for an op that falls back; the forward may hand it over contiguous.
    The view is then taken of the copy laid out as compiled, not of the tensor as it came."""
    w = strata.randn(4, 4).to(strata.bfloat16)
    a = strata.randn(2, 4).to(strata.bfloat16)
    run = _compiled(lambda a, t: strata.mm(a, t.transpose(0, 1)), a, w.t())
    assert "_input_view(" in run.output_code
    contiguous = w.t().contiguous()
    assert contiguous.stride() != w.t().stride()
    for t in (w.t(), contiguous):
        got = run(a, t)[0]
        np.testing.assert_array_equal(got.float().numpy(), strata.mm(a, w).float().numpy())
