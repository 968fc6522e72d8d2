"""``mode="max-autotune"``: the mode and options reach the inductor, each kernel's loop order
and row tile are timed once at the first call, the choice is stored in the graph cache, and
results stay eager's."""

import numpy as np
import pytest
import torch

import strata
from strata import config
from strata.compile.aot import make_fx
from strata.compile.inductor import autotune
from strata.compile.inductor.compile_fx import compile_fx


def _graph(rows=64, cols=512):
    x = strata.randn(rows, cols)
    return make_fx(lambda x: (strata.softmax(x, -1) * x.tanh()).sum(0))(x), x


def test_tiles_are_timed_once_and_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    gm, x = _graph()
    timed = []
    original = autotune.Autotuner._fastest
    monkeypatch.setattr(autotune.Autotuner, "_fastest",
                        lambda self, fn, name, *a: timed.append(name) or original(
                            self, fn, name, *a))
    tuned = compile_fx(gm, [x], max_autotune=True)
    first = tuned(x)[0]
    kernels = sorted(tuned.autotuner.choices)
    assert kernels and sorted(timed) == kernels
    for name, choice in tuned.autotuner.choices.items():   # the fastest candidate was kept
        times = tuned.autotuner.timings[name]
        assert tuple(choice[:3]) == min(times, key=times.get)
    tuned(x)
    assert sorted(timed) == kernels                      # timed at the first call only
    again = compile_fx(gm, [x], max_autotune=True)       # the graph cache holds the choices
    assert again.from_cache and again.autotuner.choices == tuned.autotuner.choices
    np.testing.assert_array_equal(again(x)[0].numpy(), first.numpy())
    assert sorted(timed) == kernels
    default = compile_fx(gm, [x])                        # the default mode: its own entry
    assert not default.from_cache and not default.autotuner.pending
    want = (torch.softmax(torch.tensor(x.numpy()), -1) * torch.tensor(x.numpy()).tanh()).sum(0)
    np.testing.assert_allclose(first.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_measured_row_tiles(monkeypatch, tmp_path):
    """Note [Measured row tiles]: the first calls run each kernel as one timed chunk; then a
    kernel that took SPLIT_SECONDS or more is split into chunks of CHUNK_SECONDS of work, a
    cheaper one stays one chunk, and the results never change."""
    assert autotune.measured_grain(1000, autotune.SPLIT_SECONDS / 2) == 1000
    assert autotune.measured_grain(1000, autotune.CHUNK_SECONDS * 10) == 100
    assert autotune.measured_grain(0, 0.0) == 1
    assert autotune.measured_grain(1000, autotune.NATIVE_SPLIT_SECONDS / 2, native=True) == 1000
    assert abs(autotune.measured_grain(1000, autotune.NATIVE_CHUNK_SECONDS * 10, True) - 100) <= 1
    # a kernel whose every chunk reads all the rows: one chunk per thread at most
    threads = strata.get_num_threads()
    assert autotune.measured_grain(1000, 1.0, True, walks_every_row=True) == -(-1000 // threads)
    assert autotune.measured_grain(1000, 1e-6, True, walks_every_row=True) == 1000
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    gm, x = _graph(256, 512)
    before = strata.get_num_threads()
    strata.set_num_threads(2)
    try:
        for split_seconds, split in ((1e9, False), (1e-12, True)):
            for pool in ("", "NATIVE_"):    # the Python pool's rule and the native pool's
                monkeypatch.setattr(autotune, pool + "SPLIT_SECONDS", split_seconds)
                monkeypatch.setattr(autotune, pool + "CHUNK_SECONDS", 1e-15)   # a row a chunk
            compiled = compile_fx(gm, [x])
            defaults = {k: list(v) for k, v in compiled.autotuner.choices.items()}
            results = [compiled(x)[0].numpy() for _ in range(autotune.MEASURED_CALLS + 1)]
            assert not compiled.autotuner.unmeasured
            walking = []
            for name, (fn, rows, grain, walks) in compiled.autotuner.choices.items():
                assert [fn, rows] == defaults[name][:2]
                # Note [Column chunks]: the column sum splits once per thread, no finer
                expected = (-(-rows // 2) if walks else 1) if split else rows
                assert grain == expected, (name, rows, grain)
                walking.append(walks)
            assert sorted(walking) == [False, True]     # softmax * tanh; the column sum
            for r in results[1:]:
                np.testing.assert_array_equal(r, results[0])
    finally:
        strata.set_num_threads(before)


def test_candidates_cover_serial_and_every_thread():
    grains = autotune.candidate_grains(1000, 64)
    assert grains[0] == autotune.default_grain(1000, 64) and 1000 in grains
    threads = strata.get_num_threads()
    assert 1000 // threads in grains or threads == 1


def test_pointwise_kernels_also_try_their_flat_loop(tmp_path, monkeypatch):
    """A pointwise kernel over rows x inner dims also runs as one flat loop; both loop orders
    give eager's answer; a kernel with a reduction has no flat variant."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    x = strata.randn(48, 40)
    gm = make_fx(lambda x: ((x.t() * 2).exp() + 1, x.sum(-1)))(x)
    tuned = compile_fx(gm, [x], max_autotune=True)
    got = tuned(x)
    tried = {fn for times in tuned.autotuner.timings.values() for fn, _, _ in times}
    assert any(fn.endswith("_flat") for fn in tried) and any(
        not fn.endswith("_flat") for fn in tried)
    reduction = [n for n, times in tuned.autotuner.timings.items()
                 if not any(fn.endswith("_flat") for fn, _, _ in times)]
    assert reduction        # the sum's kernel
    xt = torch.tensor(x.numpy())
    for g, w in zip(got, ((xt.t() * 2).exp() + 1, xt.sum(-1))):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
    for name, times in tuned.autotuner.timings.items():   # each candidate alone is right too
        for choice in times:     # (within an ulp: a loop's vector/scalar split moves with it)
            tuned.autotuner.choices[name][:3] = choice
            for g, w in zip(tuned(x), got):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=3e-7, atol=0)


@pytest.mark.parametrize("kwargs", [{"mode": "max-autotune"},
                                    {"mode": "max-autotune-no-cudagraphs"},
                                    {"options": {"max_autotune": True}}])
def test_training_step_with_max_autotune_matches_eager(kwargs, tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((32, 16)).astype(np.float32), np.zeros(16, np.float32)
    xs = rng.standard_normal((8, 32)).astype(np.float32)
    calls = []
    original = autotune.Autotuner._fastest
    monkeypatch.setattr(autotune.Autotuner, "_fastest",
                        lambda self, *a: calls.append(1) or original(self, *a))
    results = []
    for m, compile_fn in ((strata, lambda f: strata.compile(f, **kwargs)), (torch, None)):
        weight, bias = (m.tensor(a, requires_grad=True) for a in (w, b))

        def loss_fn(x, m=m, weight=weight, bias=bias):
            return m.nn.functional.gelu(x @ weight + bias).softmax(-1).square().mean()
        loss = (compile_fn(loss_fn) if compile_fn else loss_fn)(m.tensor(xs))
        loss.backward()
        results.append((float(loss.detach()), weight.grad.numpy(), bias.grad.numpy()))
    assert calls    # the mode reached the kernels: their tiles were timed
    (got, *got_grads), (want, *want_grads) = results
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-7)


def test_default_mode_times_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(autotune.Autotuner, "_fastest", lambda *a: pytest.fail("timed"))
    x = strata.randn(4, 8)
    out = strata.compile(lambda x: (x.exp() + 1).sum(-1), mode="default")(x)
    want = (torch.tensor(x.numpy()).exp() + 1).sum(-1)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5)


@pytest.mark.parametrize("options, message", [
    ({"max_autotun": True}, "Unexpected optimization option max_autotun, known options are"),
    ({"max_autotune": 1}, "Unexpected type of attr max_autotune, got int should be bool"),
])
def test_bad_options_raise_as_torch(options, message):
    with pytest.raises(RuntimeError, match=message):
        torch.compile(lambda x: x, options=options)
    with pytest.raises(RuntimeError, match=message):
        strata.compile(lambda x: x, options=options)


def test_measuring_tolerates_a_kernel_another_thread_finished():
    """Two threads calling one graph may measure a kernel at once; the one that comes second
    finds its samples gone and leaves the choice as the first set it."""
    tuner = autotune.Autotuner({"k": ["k", 0, 7, False]}, unmeasured=["k"])
    del tuner.unmeasured["k"]      # the other thread took the last sample
    tuner._measure(lambda *args: None, "k", 0, [])
    assert tuner.choices["k"][2] == 7 and "k" not in tuner.unmeasured
