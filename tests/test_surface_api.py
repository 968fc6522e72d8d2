"""PyTorch surface everyday programs reach for (issue 11 §3), each against PyTorch."""

import math

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check_outcome


def test_constants():
    for name in ("inf", "nan", "pi", "e", "newaxis"):
        s, t = getattr(strata, name), getattr(torch, name)
        assert (s is t is None) or s == t or (math.isnan(s) and math.isnan(t)), name
    assert strata.ones(3)[strata.newaxis].shape == (1, 3)


def test_variable():
    from strata.autograd import Variable as SV
    from torch.autograd import Variable as TV
    for V, m in ((SV, strata), (TV, torch)):
        x = m.ones(2)
        v = V(x, requires_grad=True)
        assert v is not x and v.requires_grad and v.is_leaf and not x.requires_grad
        assert isinstance(x, V) and type(v) is m.Tensor
        assert V().shape == (0,)
        y = m.ones(2, requires_grad=True) * 2
        assert V(y).grad_fn is None and not V(y).requires_grad
    check_outcome(lambda m: m.autograd.Variable([1.0, 2.0]))
    check_outcome(lambda m: m.autograd.Variable(m.arange(3), requires_grad=True))


def test_set_default_device():
    try:
        for m in (strata, torch):
            m.set_default_device("meta")
            assert m.ones(2).device.type == "meta" and m.get_default_device().type == "meta"
            with m.device("cpu"):
                assert m.zeros(1).device.type == "cpu"
            assert m.empty(1).device.type == "meta"
            m.set_default_device(None)
            assert m.ones(1).device.type == "cpu" and str(m.get_default_device()) == "cpu"
    finally:
        strata.set_default_device(None)
        torch.set_default_device(None)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_apply_(dtype):
    data = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    outs = []
    for m in (strata, torch):
        x = m.tensor(data).t()             # non-contiguous: written through its strides
        out = x.apply_(lambda v: not v if isinstance(v, bool) else v * 3 + 1)
        assert out is x and x._version == 0
        outs.append(x)
    assert_same(*outs)
    check_outcome(lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v))
    check_outcome(lambda m: m.ones(2).apply_(3))


def _grads(fn, *arrays):
    """``fn(m, *tensors)`` and the gradients of its sum (weighted by an arange), per library."""
    out = []
    for m in (strata, torch):
        ts = [m.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        y = fn(m, *ts)
        w = m.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape) / y.numel()
        (y * w).sum().backward()
        out.append((y.detach(), [t.grad for t in ts if t.requires_grad]))
    (sy, sg), (ty, tg) = out
    assert_same(sy, ty, atol=1e-5, rtol=1e-4)
    for a, b in zip(sg, tg):
        assert_same(a, b, atol=1e-5, rtol=1e-4)


def test_rms_norm_values_gradients_and_errors(rng):
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    _grads(lambda m, x, w: m.nn.functional.rms_norm(x, (4,), w), x, w)
    _grads(lambda m, x: m.nn.functional.rms_norm(x, (3, 4), eps=1e-3), x)
    module = [m.nn.RMSNorm(4) for m in (strata, torch)]
    assert_same(module[0](strata.tensor(x)), module[1](torch.tensor(x)))
    for fn in (lambda m: m.nn.functional.rms_norm(m.ones(2, 3), (4,)),
               lambda m: m.nn.functional.rms_norm(m.ones(2, 3), (3,), m.ones(2)),
               lambda m: m.nn.functional.rms_norm(m.ones(2, 3).long(), (3,)),
               lambda m: m.nn.functional.rms_norm(m.ones(2, 3), ())):
        err = check_outcome(fn)
        assert str(err) == str(_torch_error(fn))


def _torch_error(fn):
    try:
        fn(torch)
    except Exception as e:  # noqa: BLE001
        return e
    raise AssertionError("torch did not raise")


# --- packed sequences through RNNs ----------------------------------------------------------------

def _rnn_pair(kind, **kwargs):
    s_mod = getattr(strata.nn, kind)(3, 4, **kwargs)
    t_mod = getattr(torch.nn, kind)(3, 4, **kwargs)
    with torch.no_grad():
        for name, p in t_mod.named_parameters():
            p.copy_(torch.tensor(getattr(s_mod, name).detach().numpy()))
    return s_mod, t_mod


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence_through_rnn(kind, bidirectional, enforce_sorted, rng):
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    x = rng.standard_normal((5, 3, 3)).astype(np.float32)
    h0 = rng.standard_normal((2 * (2 if bidirectional else 1), 3, 4)).astype(np.float32)
    modules = _rnn_pair(kind, num_layers=2, bidirectional=bidirectional)
    results = []
    for m, module in zip((strata, torch), modules):
        rnn = m.nn.utils.rnn
        xt = m.tensor(x, requires_grad=True)
        packed = rnn.pack_padded_sequence(xt, m.tensor(lengths), enforce_sorted=enforce_sorted)
        hx = m.tensor(h0)
        hx = (hx, m.zeros_like(hx) + 0.5) if kind == "LSTM" else hx
        out, hidden = module(packed, hx)
        assert isinstance(out, rnn.PackedSequence)
        padded, out_lengths = rnn.pad_packed_sequence(out, batch_first=True, padding_value=-1.0)
        h_n = hidden[0] if kind == "LSTM" else hidden
        loss = (padded * m.arange(padded.numel()).reshape(padded.shape) / 50).sum() + \
            (h_n ** 2).sum()
        loss.backward()
        grads = [xt.grad] + [p.grad for _, p in module.named_parameters()]
        results.append((padded, out_lengths, out.batch_sizes, hidden, grads))
    (sp, sl, sb, sh, sg), (tp, tl, tb, th, tg) = results
    assert_same(sp, tp, atol=1e-5, rtol=1e-4)
    assert_same(sl, tl)
    assert_same(sb, tb)
    for a, b in zip(sh if kind == "LSTM" else (sh,), th if kind == "LSTM" else (th,)):
        assert_same(a, b, atol=1e-5, rtol=1e-4)
    for a, b in zip(sg, tg):
        assert_same(a, b, atol=1e-4, rtol=1e-4)


def test_pack_and_pad_round_trips_and_errors(rng):
    seqs = [rng.standard_normal((n, 2)).astype(np.float32) for n in (2, 4, 1)]
    outs = []
    for m in (strata, torch):
        rnn = m.nn.utils.rnn
        tensors = [m.tensor(s) for s in seqs]
        packed = rnn.pack_sequence(tensors, enforce_sorted=False)
        padded, lengths = rnn.pad_packed_sequence(packed, total_length=6)
        back = rnn.unpack_sequence(packed)
        unpadded = rnn.unpad_sequence(rnn.pad_sequence(tensors), m.tensor([2, 4, 1]))
        outs.append((packed.data, packed.batch_sizes, packed.sorted_indices,
                     packed.unsorted_indices, padded, lengths, back, unpadded))
    for a, b in zip(*outs):
        assert_same(a, b)
    x = np.zeros((3, 2, 1), np.float32)
    for fn in (lambda m: m.nn.utils.rnn.pack_padded_sequence(m.tensor(x), [2, 3]),
               lambda m: m.nn.utils.rnn.pack_padded_sequence(m.tensor(x), [3, 0],
                                                             enforce_sorted=False),
               lambda m: m.nn.utils.rnn.pack_padded_sequence(m.tensor(x), [3]),
               lambda m: m.nn.utils.rnn.pad_packed_sequence(
                   m.nn.utils.rnn.pack_padded_sequence(m.tensor(x), [3, 1]), total_length=2)):
        assert str(check_outcome(fn)) == str(_torch_error(fn))


# --- statistics and linear algebra ----------------------------------------------------------------

def test_cov_corrcoef_gradients_and_errors(rng):
    x = rng.standard_normal((3, 5))
    _grads(lambda m, x: m.cov(x), x)
    _grads(lambda m, x, a: m.cov(x, correction=1, aweights=a), x, np.abs(x[0]) + 0.1)
    _grads(lambda m, x: m.corrcoef(x), x)
    for fn in (lambda m: m.cov(m.ones(2, 2, 2)),
               lambda m: m.cov(m.ones(2, 3), fweights=m.ones(3)),
               lambda m: m.cov(m.ones(2, 3), aweights=-m.ones(3)),
               lambda m: m.cov(m.ones(2, 3), fweights=m.ones(2).long()),
               lambda m: m.cov(m.ones(2, 3), aweights=m.zeros(3)),
               lambda m: m.cov(m.ones(2, 3).bool()),
               lambda m: m.corrcoef(m.ones(2, 2, 2))):
        assert str(check_outcome(fn)) == str(_torch_error(fn))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = strata.cov(strata.ones(2, 1))
    assert out.isnan().all()


def test_linalg_gradients(rng):
    a = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    b = rng.standard_normal((3, 2))
    _grads(lambda m, a: m.linalg.slogdet(a).logabsdet, a)
    _grads(lambda m, a: m.logdet(a @ a.mT), a)
    _grads(lambda m, a: m.linalg.matrix_exp(a), a * 0.7)
    _grads(lambda m, a, b: m.linalg.multi_dot([b.mT, a, a, b]), a, b)
    _grads(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), a, b)
    _grads(lambda m, a, b: m.linalg.solve_triangular(a, b.mT, upper=False, left=False,
                                                     unitriangular=True), a, b)
    _grads(lambda m, a, b: m.linalg.lstsq(a, b).solution, a, b)
    _grads(lambda m, x: m.diag_embed(x, 1), b)
    _grads(lambda m, a: m.svd(a).S, a)


def test_logdet_of_a_singular_matrix_is_minus_infinity():
    outs = [m.logdet(m.zeros(2, 2, dtype=m.float64)) for m in (strata, torch)]
    assert_same(*outs)
    assert outs[0].item() == -np.inf


def test_linalg_errors():
    A = np.eye(3)
    for fn in (lambda m: m.linalg.slogdet(m.ones(2, 3)),
               lambda m: m.linalg.slogdet(m.ones(3)),
               lambda m: m.linalg.multi_dot([m.ones(2)]),
               lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
               lambda m: m.linalg.solve_triangular(m.tensor(A), m.ones(2, 2), upper=True),
               lambda m: m.linalg.lstsq(m.tensor(A), m.ones(2, 2)),
               lambda m: m.linalg.lstsq(m.tensor(A), m.ones(2, 2).double()),
               lambda m: m.linalg.matrix_rank(m.ones(3)),
               lambda m: m.diag_embed(m.ones(2), 0, 1, 1),
               lambda m: m.geqrf(m.ones(3)),
               lambda m: m.geqrf(m.ones(2, 2).long()),
               lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(5)),
               lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(2))):
        assert str(check_outcome(fn)) == str(_torch_error(fn))


def test_data_parallel_is_a_pass_through_without_cuda():
    outs = []
    for m in (strata, torch):
        m.manual_seed(0)
        inner = m.nn.Linear(2, 3)
        with m.no_grad():
            inner.weight.copy_(m.arange(6.0).reshape(3, 2))
        model = m.nn.DataParallel(inner)
        assert model.module is inner and model.device_ids == []
        assert list(model.state_dict()) == ["module.weight", "module.bias"]
        outs.append(model(m.ones(4, 2)) - inner.bias)
    assert_same(*outs)


# --- 3-d layers -----------------------------------------------------------------------------------

def _same_module(kind, *args, **kwargs):
    s_mod = getattr(strata.nn, kind)(*args, **kwargs)
    t_mod = getattr(torch.nn, kind)(*args, **kwargs)
    with torch.no_grad():
        for name, p in s_mod.named_parameters():
            dict(t_mod.named_parameters())[name].copy_(torch.tensor(p.detach().numpy()))
    return s_mod, t_mod


@pytest.mark.parametrize("layer", [
    ("Conv3d", (2, 3, 3), dict(stride=2, padding=1)),
    ("Conv3d", (2, 4, (1, 2, 3)), dict(padding="same", padding_mode="reflect", bias=False)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=2, output_padding=1)),
    ("MaxPool3d", (2,), dict(ceil_mode=True)),
    ("MaxPool3d", (3,), dict(stride=2, padding=1, dilation=(1, 2, 1))),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, count_include_pad=False, ceil_mode=True)),
])
def test_3d_layers_values_and_gradients(layer, rng):
    kind, args, kwargs = layer
    x = rng.standard_normal((2, 2, 5, 6, 7)).astype(np.float32)
    outs = []
    for m, module in zip((strata, torch), _same_module(kind, *args, **kwargs)):
        xt = m.tensor(x, requires_grad=True)
        y = module(xt)
        (y * m.arange(y.numel()).reshape(y.shape) / y.numel()).sum().backward()
        outs.append([y.detach(), xt.grad] + [p.grad for p in module.parameters()])
    for a, b in zip(*outs):
        assert_same(a, b, atol=1e-4, rtol=1e-4)


def test_3d_pool_errors():
    for fn in (lambda m: m.nn.functional.max_pool3d(m.ones(1, 4, 4, 4), 5),
               lambda m: m.nn.functional.max_pool3d(m.ones(1, 4, 4, 4), 2, padding=2),
               lambda m: m.nn.functional.avg_pool3d(m.ones(2, 2, 2), 2)):
        assert str(check_outcome(fn)) == str(_torch_error(fn))


# --- lazy modules ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,args,shape", [
    ("LazyLinear", (3,), (2, 5)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)),
    ("LazyConv1d", (4, 2), (3, 7)), ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)),
])
def test_lazy_modules_become_their_eager_layer(kind, args, shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    modules = {}
    for m in (strata, torch):
        module = modules[m] = getattr(m.nn, kind)(*args)
        assert module.has_uninitialized_params()
        assert isinstance(module.weight, m.nn.parameter.UninitializedParameter)
        module(m.tensor(x))
        eager = getattr(m.nn, kind.removeprefix("Lazy"))
        assert type(module) is eager and not isinstance(module.weight,
                                                        m.nn.parameter.UninitializedParameter)
    s_module, t_module = modules[strata], modules[torch]
    assert {k: tuple(v.shape) for k, v in s_module.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t_module.state_dict().items()}
    with torch.no_grad():
        for name, p in t_module.named_parameters():
            p.copy_(torch.tensor(dict(s_module.named_parameters())[name].detach().numpy()))
    assert_same(s_module(strata.tensor(x)).detach(), t_module(torch.tensor(x)).detach(),
                atol=1e-5)


def test_lazy_module_errors():
    for m in (strata, torch):
        with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\)"):
            m.nn.LazyConv2d(2, 3)(m.ones(2, 3))
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            m.nn.LazyConv2d(4, 1, groups=2)(m.ones(1, 3, 2, 2))


# --- max unpooling --------------------------------------------------------------------------------

@pytest.mark.parametrize("dims,shape,kwargs", [
    (1, (2, 3, 8), dict()), (2, (2, 3, 6, 6), dict(stride=2, padding=1)),
    (2, (3, 6, 6), dict(output_size=(7, 7))), (3, (1, 2, 4, 6, 4), dict()),
])
def test_max_unpool_values_and_gradients(dims, shape, kwargs, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    outs = []
    for m in (strata, torch):
        F = m.nn.functional
        pool = getattr(F, f"max_pool{dims}d")
        xt = m.tensor(x)
        values, indices = pool(xt, 2, stride=kwargs.get("stride"),
                               padding=kwargs.get("padding", 0), return_indices=True)
        values = values.detach().requires_grad_()
        module = getattr(m.nn, f"MaxUnpool{dims}d")(2, kwargs.get("stride"),
                                                     kwargs.get("padding", 0))
        y = module(values, indices, kwargs.get("output_size"))
        (y * m.arange(y.numel()).reshape(y.shape)).sum().backward()
        outs.append((y.detach(), values.grad))
    for a, b in zip(*outs):
        assert_same(a, b)


def test_max_unpool_errors():
    def pooled(m):
        return m.nn.functional.max_pool2d(m.arange(32.0).reshape(1, 2, 4, 4), 2,
                                          return_indices=True)
    def one_bad_index(m):
        values, indices = pooled(m)
        indices[0, 1, 1, 1] = 99
        return values, indices

    for fn in (lambda m: m.nn.functional.max_unpool2d(*pooled(m), 2, output_size=(9, 9)),
               lambda m: m.nn.functional.max_unpool2d(*one_bad_index(m), 2),
               lambda m: m.nn.functional.max_unpool2d(pooled(m)[0], pooled(m)[1].float(), 2),
               lambda m: m.nn.functional.max_unpool2d(pooled(m)[0], pooled(m)[1][:, :1], 2)):
        assert str(check_outcome(fn)) == str(_torch_error(fn))


def test_histogram_errors_and_missing_derivative():
    x = np.array([1.0, 2.0, 1.0, 4.0, 0.5], np.float32)
    for fn in (lambda m: m.histogram(m.tensor(x).long(), 3),
               lambda m: m.histogram(m.tensor(x), -1),
               lambda m: m.histogram(m.tensor(x), 3, range=(2.0, 1.0)),
               lambda m: m.histogram(m.tensor(x), 3, weight=m.ones(4))):
        assert str(check_outcome(fn)) == str(_torch_error(fn))
    for m in (strata, torch):   # PyTorch records a node whose backward raises
        hist, edges = m.histogram(m.tensor(x, requires_grad=True), 3)
        assert hist.requires_grad and type(hist.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for .*histogram.* is not implemented"):
            hist.sum().backward()


# --- Adafactor ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.05, weight_decay=0.1, d=2.0),
                                    dict(maximize=True, eps=(1e-8, 1e-2), beta2_decay=-0.5)])
def test_adafactor_matches_torch(kwargs, rng):
    shapes = [(4, 3), (2, 3, 5), (6,)]
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(5)]
    results = []
    for m in (strata, torch):
        params = [m.nn.Parameter(m.tensor(a)) for a in data]
        opt = m.optim.Adafactor(params, **kwargs)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = m.tensor(g)
            opt.step()
        state = opt.state_dict()["state"]
        results.append([p.detach() for p in params] + [state[1]["row_var"], state[1]["col_var"],
                                                      state[2]["variance"], state[0]["step"]])
    for a, b in zip(*results):
        assert_same(a, b, atol=1e-6, rtol=1e-5)


def test_adafactor_errors():
    for kwargs in (dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)), dict(d=0.5),
                   dict(weight_decay=-0.1)):
        messages = []
        for m in (strata, torch):
            with pytest.raises(ValueError) as err:
                m.optim.Adafactor([m.nn.Parameter(m.ones(2))], **kwargs)
            messages.append(str(err.value))
        assert messages[0] == messages[1]


# --- affine_grid / grid_sample --------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_values_and_gradients(mode, padding_mode, align_corners, rng):
    x = rng.standard_normal((2, 3, 5, 6))
    theta = np.array([[[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.4, 0.0, 0.3], [0.1, 0.7, 0.5]]])
    outs = []
    for m in (strata, torch):
        xt, th = m.tensor(x, requires_grad=True), m.tensor(theta, requires_grad=True)
        grid = m.nn.functional.affine_grid(th, (2, 3, 4, 7), align_corners=align_corners)
        grid = grid * 1.3     # reach outside the image, so padding matters
        y = m.nn.functional.grid_sample(xt, grid, mode, padding_mode, align_corners)
        (y * m.arange(y.numel()).reshape(y.shape) / y.numel()).sum().backward()
        outs.append((grid.detach(), y.detach(), xt.grad, th.grad))
    if mode == "nearest":   # no path from the grid: None where PyTorch gives zeros
        assert outs[0][3] is None and not outs[1][3].any()
        outs = [o[:3] for o in outs]
    for a, b in zip(*outs):
        assert_same(a, b, atol=1e-8, rtol=1e-6)


def test_affine_grid_3d_and_errors():
    theta = np.random.default_rng(3).standard_normal((2, 3, 4))
    outs = [m.nn.functional.affine_grid(m.tensor(theta), (2, 1, 3, 4, 5), align_corners=False)
            for m in (strata, torch)]
    assert_same(*outs)
    for fn in (lambda m: m.nn.functional.affine_grid(m.ones(2, 2, 3), (2, 3, 4, 5, 6), False),
               lambda m: m.nn.functional.affine_grid(m.ones(2, 3, 3), (2, 3, 4, 5), False),
               lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.ones(1, 2, 2, 3),
                                                     align_corners=False),
               lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.ones(2, 2, 2, 2),
                                                     align_corners=False),
               lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.ones(1, 2, 2, 2),
                                                     mode="foo"),
               lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 3, 3), m.ones(1, 2, 2, 2),
                                                     padding_mode="foo")):
        assert str(check_outcome(fn)).replace("strata", "torch") == str(_torch_error(fn))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        strata.nn.functional.affine_grid(strata.ones(1, 2, 3), (1, 1, 2, 2))


# --- CTC loss -------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    dict(targets=[[1, 2, 2], [3, 1, 0]], input_lengths=[6, 5], target_lengths=[3, 2]),
    dict(targets=[1, 2, 2, 3, 1], input_lengths=[6, 6], target_lengths=[3, 2],
         reduction="sum"),
    dict(targets=[[1, 1], [2, 0]], input_lengths=[2, 4], target_lengths=[2, 0],
         reduction="none"),                             # repeats need a blank: impossible -> inf
    dict(targets=[[1, 1], [2, 0]], input_lengths=[2, 4], target_lengths=[2, 0],
         reduction="none", zero_infinity=True),
    dict(targets=[[3, 2, 1], [1, 2, 3]], input_lengths=[6, 3], target_lengths=[3, 3],
         blank=4, reduction="mean", zero_infinity=True),
])
def test_ctc_loss_values_and_gradients(case, rng):
    logits = rng.standard_normal((6, 2, 5))
    outs = []
    for m in (strata, torch):
        x = m.tensor(logits, requires_grad=True)
        kwargs = dict(case)
        targets = m.tensor(kwargs.pop("targets"))
        loss = m.nn.functional.ctc_loss(x.log_softmax(2), targets, **kwargs)
        finite = loss.isfinite() if loss.ndim else loss.isfinite().reshape(1)
        loss.sum().backward() if finite.all() else (loss * 0).sum().backward()
        outs.append((loss.detach(), x.grad))
    if outs[1][0].isfinite().all():
        for a, b in zip(*outs):
            assert_same(a, b, atol=1e-6, rtol=1e-5)
    else:
        assert_same(outs[0][0], outs[1][0])


def test_ctc_loss_module_and_errors(rng):
    logits = rng.standard_normal((5, 2, 4)).astype(np.float32)
    values = [m.nn.CTCLoss()(m.tensor(logits).log_softmax(2), m.tensor([[1, 2], [3, 3]]),
                             m.tensor([5, 4]), m.tensor([2, 2])) for m in (strata, torch)]
    assert_same(*values, atol=1e-5)
    for fn in (lambda m: m.nn.functional.ctc_loss(m.tensor(logits), m.tensor([[1, 2], [3, 3]]),
                                                  [5, 4], [2, 3]),
               lambda m: m.nn.functional.ctc_loss(m.tensor(logits), m.tensor([[1, 2], [3, 3]]),
                                                  [6, 4], [2, 2])):
        assert str(check_outcome(fn)) == str(_torch_error(fn))


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d_values_and_gradients(padding_mode, rng):
    x = rng.standard_normal((2, 2, 3, 4, 5))
    theta = rng.standard_normal((2, 3, 4)) * 0.5 + np.eye(3, 4)
    outs = []
    for m in (strata, torch):
        xt, th = m.tensor(x, requires_grad=True), m.tensor(theta, requires_grad=True)
        grid = m.nn.functional.affine_grid(th, (2, 2, 3, 3, 4), align_corners=False) * 1.2
        y = m.nn.functional.grid_sample(xt, grid, "bilinear", padding_mode, False)
        (y * m.arange(y.numel()).reshape(y.shape) / y.numel()).sum().backward()
        outs.append((y.detach(), xt.grad, th.grad))
    for a, b in zip(*outs):
        assert_same(a, b, atol=1e-8, rtol=1e-6)


def test_histogram_of_integers_raises_torchs_dtype_error():
    with pytest.raises(NotImplementedError) as ours:
        strata.histogram(strata.arange(5), bins=3)
    with pytest.raises(NotImplementedError) as theirs:
        torch.histogram(torch.arange(5), bins=3)
    assert str(ours.value) == str(theirs.value)


def test_layouts_and_memory_formats_are_pytorchs_types():
    for m in (strata, torch):
        dense, sparse = m.ones(2), m.sparse_coo_tensor(m.tensor([[0]]), m.tensor([1.0]), (2,))
        assert isinstance(dense.layout, m.layout) and dense.layout == m.strided
        assert isinstance(sparse.layout, m.layout) and sparse.layout == m.sparse_coo
        assert dense.layout != m.sparse_coo
        for name in ("contiguous_format", "preserve_format", "channels_last",
                     "channels_last_3d"):
            assert isinstance(getattr(m, name), m.memory_format)
        assert repr(m.channels_last) == f"{m.__name__}.channels_last"
        assert repr(sparse.layout) == f"{m.__name__}.sparse_coo"
    assert strata.empty(1, 2, 3, 4, 5, memory_format=strata.channels_last_3d).stride() == \
        torch.empty(1, 2, 3, 4, 5, memory_format=torch.channels_last_3d).stride()
