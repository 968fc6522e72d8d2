"""Focused checks, against PyTorch, of the nn, sparse and torch.func gaps that the training
programs in tests/scripts/ (tabular_embeddings, word2vec_sgns, ...) and their neighbours found:
sparse gradients with SGD and summed in the backward, torch.nn.modules.utils, Module.to with a
memory format, stack_module_state, LP pooling, multi-margin loss, Tensor.map_, GradScaler's
getters, the nested-tensor encoder's zero padding."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from test_program_gaps import FLOATS

import strata


# nn.Embedding(sparse=True) trained with plain SGD: the step is dense.add_(sparse grad, alpha=-lr)
def _sparse_add_(m, dtype, alpha):
    dense = m.arange(6, dtype=m.float64).view(3, 2).to(dtype)
    sparse = m.sparse_coo_tensor([[0, 2, 0], [1, 0, 1]], m.tensor([1.0, 2.0, 3.0]), (3, 2))
    out = dense.add_(sparse, alpha=alpha)
    return out, dense


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [1, -0.5])
def test_dense_add_sparse_in_place(dtype_name, alpha):
    s_out, s_dense = _sparse_add_(strata, FLOATS[dtype_name][0], alpha)
    t_out, t_dense = _sparse_add_(torch, FLOATS[dtype_name][1], alpha)
    assert s_out is s_dense and t_out is t_dense
    assert_same(s_dense, t_dense)


SPARSE_ADD_ERRORS = {
    "integer_self": lambda m: m.zeros(3, dtype=m.int64),
    "other_shape": lambda m: m.zeros(2, 2),
}


@pytest.mark.parametrize("name", sorted(SPARSE_ADD_ERRORS))
def test_dense_add_sparse_in_place_errors_leave_self_untouched(name):
    messages = []
    for m in (strata, torch):
        dense = SPARSE_ADD_ERRORS[name](m)
        sparse = m.sparse_coo_tensor([[0, 2]], m.tensor([1.0, 2.0]), (3,)) if dense.ndim == 1 \
            else m.sparse_coo_tensor([[0, 2], [1, 0]], m.tensor([1.0, 2.0]), (3, 2))
        with pytest.raises(RuntimeError) as err:
            dense.add_(sparse)
        assert not dense.any()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def _sparse_embedding_sgd(m):
    emb = m.nn.Embedding(10, 3, sparse=True)
    with m.no_grad():
        emb.weight.copy_(m.arange(30.0).view(10, 3) / 10)
    opt = m.optim.SGD(emb.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        emb(m.tensor([1, 2, 2, 7])).pow(2).sum().backward()
        opt.step()
    return emb.weight.detach()


def test_sparse_embedding_trains_with_sgd():
    assert_same(_sparse_embedding_sgd(strata), _sparse_embedding_sgd(torch))


# loading a DistributedDataParallel checkpoint: torch.nn.modules.utils and its helpers
def test_nn_modules_utils_helpers_match_pytorch():
    import collections

    def run(m):
        from importlib import import_module
        u = import_module(f"{m.__name__}.nn.modules.utils")
        model = m.nn.Sequential(m.nn.Conv2d(1, 2, 3), m.nn.BatchNorm2d(2))
        wrapped = collections.OrderedDict(("module." + k, v)
                                          for k, v in model.state_dict().items())
        wrapped["other.key"] = m.ones(1)
        wrapped._metadata = collections.OrderedDict(
            (k, {"version": 1}) for k in ("", "module", "module.0", "module.1"))
        u.consume_prefix_in_state_dict_if_present(wrapped, "module.")
        return (u._pair(3), u._pair((1, 2)), u._single(2), u._triple([1, 2, 3]),
                u._quadruple(0), u._reverse_repeat_tuple((1, 2), 2),
                u._list_with_default([None, 3], [1, 2, 5, 6]), list(wrapped),
                list(wrapped._metadata), m.nn.modules.utils is u)
    assert run(strata) == run(torch)


def test_nn_utils_is_not_shadowed_by_nn_modules_utils():
    """``torch.nn.utils`` (clip_grad_norm_, rnn, ...) and ``torch.nn.modules.utils`` (_pair,
    ...) are two modules; the star import of nn.modules must not replace the first."""
    assert strata.nn.utils.__name__ == "strata.nn.utils"
    assert strata.nn.modules.utils.__name__ == "strata.nn.modules.utils"
    assert callable(strata.nn.utils.clip_grad_norm_) and callable(strata.nn.utils.rnn.pad_sequence)


# the performance tutorials' `model = model.to(memory_format=torch.channels_last)`
def _channels_last_model(m):
    model = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4), m.nn.Flatten(),
                            m.nn.Linear(4 * 4 * 4, 2))
    rng = np.random.default_rng(0)
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32)))
    out = model.to(m.float64, memory_format=m.channels_last)
    x = m.tensor(rng.standard_normal((2, 3, 6, 6))).to(memory_format=m.channels_last)
    model(x).sum().backward()
    return out is model, [(p.dtype, p.stride(), p.grad.stride()) for p in model.parameters()], \
        [p.grad for p in model.parameters()]


def test_module_to_memory_format_converts_4d_parameters():
    s_same, s_layout, s_grads = _channels_last_model(strata)
    t_same, t_layout, t_grads = _channels_last_model(torch)
    assert s_same and t_same
    assert [(str(d).split(".")[-1], st, gs) for d, st, gs in s_layout] == \
        [(str(d).split(".")[-1], st, gs) for d, st, gs in t_layout]
    assert_same(s_grads, t_grads)


# the model-ensembling tutorial: stack_module_state + functional_call + vmap
def _ensemble(m):
    models = []
    for seed in range(3):
        model = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.BatchNorm1d(8), m.nn.Linear(8, 2))
        rng = np.random.default_rng(seed)
        with m.no_grad():
            for p in model.parameters():
                p.copy_(m.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
        models.append(model.eval())
    params, buffers = m.func.stack_module_state(models)
    x = m.tensor(np.random.default_rng(9).standard_normal((5, 4)).astype(np.float32))
    out = m.func.vmap(lambda p, b, v: m.func.functional_call(models[0], (p, b), (v,)),
                      in_dims=(0, 0, None))(params, buffers, x)
    out.sum().backward()
    return (out, [params[k].grad for k in sorted(params)], [buffers[k] for k in sorted(buffers)],
            [params[k].is_leaf for k in sorted(params)])


def test_stack_module_state_ensembles_with_vmap():
    s, t = _ensemble(strata), _ensemble(torch)
    assert s[3] == t[3] == [True] * 6
    assert_same(s[:3], t[:3], atol=1e-5, rtol=1e-5)


def test_stack_module_state_errors_match_pytorch():
    for make in (lambda m: [], lambda m: [m.nn.Linear(2, 2), m.nn.Linear(2, 2).eval()],
                 lambda m: [m.nn.Linear(2, 2), m.nn.Conv1d(2, 2, 1)]):
        messages = []
        for m in (strata, torch):
            with pytest.raises(RuntimeError) as err:
                m.func.stack_module_state(make(m))
            messages.append(str(err.value))
        assert messages[0] == messages[1]


# skip-gram with negative sampling: one sparse embedding looked up twice, so the backward sums
# two sparse gradients (sparse.add_)
def _sparse_add_sparse_(m):
    a = m.sparse_coo_tensor([[0, 2]], m.tensor([1.0, 2.0]), (3,))
    b = m.sparse_coo_tensor([[2, 1]], m.tensor([5.0, 7.0]), (3,))
    out = a.add_(b, alpha=2)
    return out is a, a.to_dense()


def test_sparse_add_sparse_in_place():
    s, t = _sparse_add_sparse_(strata), _sparse_add_sparse_(torch)
    assert s[0] and t[0]
    assert_same(s[1], t[1])


@pytest.mark.parametrize("case", ["integer_self", "size", "dense_other"])
def test_sparse_add_in_place_errors_leave_self_untouched(case):
    messages = []
    for m in (strata, torch):
        dtype = m.int64 if case == "integer_self" else m.float32
        a = m.sparse_coo_tensor([[0, 2]], m.tensor([1, 2], dtype=dtype), (3,))
        other = {"integer_self": m.sparse_coo_tensor([[1]], m.tensor([1.5]), (3,)),
                 "size": m.sparse_coo_tensor([[1]], m.tensor([1.5]), (4,)),
                 "dense_other": m.ones(3)}[case]
        with pytest.raises(RuntimeError) as err:
            a.add_(other)
        assert a.to_dense().tolist() == [1, 0, 2]
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def _skip_gram(m, optimizer):
    inp, out = m.nn.Embedding(20, 6, sparse=True), m.nn.Embedding(20, 6, sparse=True)
    rng = np.random.default_rng(0)
    with m.no_grad():
        for emb in (inp, out):
            emb.weight.copy_(m.tensor(rng.normal(0, 0.2, (20, 6)).astype(np.float32)))
    opt = optimizer(m, [inp.weight, out.weight])
    losses = []
    for _ in range(3):
        c, o = m.tensor(rng.integers(0, 20, 8)), m.tensor(rng.integers(0, 20, 8))
        neg = m.tensor(rng.integers(0, 20, (8, 3)))
        vc = inp(c)
        pos = m.nn.functional.logsigmoid((vc * out(o)).sum(1))
        negs = m.nn.functional.logsigmoid(-m.bmm(out(neg), vc.unsqueeze(2)).squeeze(2)).sum(1)
        loss = -(pos + negs).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, inp.weight.detach(), out.weight.detach()


@pytest.mark.parametrize("optimizer", ["SparseAdam", "SGD"])
def test_skip_gram_with_sparse_embeddings(optimizer):
    make = {"SparseAdam": lambda m, ps: m.optim.SparseAdam(ps, lr=0.05),
            "SGD": lambda m, ps: m.optim.SGD(ps, lr=0.5)}[optimizer]
    s, t = _skip_gram(strata, make), _skip_gram(torch, make)
    np.testing.assert_allclose(s[0], t[0], rtol=1e-5)
    assert_same(s[1:], t[1:], atol=1e-5, rtol=1e-5)


def test_grad_scaler_getters_and_setters():
    seen = []
    for m in (strata, torch):
        scaler = m.amp.GradScaler("cpu", init_scale=256.0, growth_interval=3)
        before = (scaler.get_growth_factor(), scaler.get_backoff_factor(),
                  scaler.get_growth_interval())
        scaler.set_growth_factor(3.0)
        scaler.set_backoff_factor(0.25)
        scaler.set_growth_interval(5)
        restored = m.amp.GradScaler("cpu")
        restored.load_state_dict(scaler.state_dict())
        seen.append((before, sorted(scaler.state_dict().items()), restored.get_growth_interval(),
                     restored.get_growth_factor(), restored.get_backoff_factor()))
    assert seen[0] == seen[1]


LP_POOLS = {
    "LPPool2d": lambda m, x: m.nn.LPPool2d(2, 2)(x),
    "LPPool2d_p3_stride_ceil": lambda m, x: m.nn.LPPool2d(3, (2, 3), stride=(1, 2),
                                                          ceil_mode=True)(x.abs()),
    "LPPool1d": lambda m, x: m.nn.LPPool1d(2, 3, stride=2)(x.flatten(2)),
    "lp_pool3d": lambda m, x: m.nn.functional.lp_pool3d(x.unsqueeze(1).abs() + 0.1, 1.5, 2),
    "lp_pool2d_p1": lambda m, x: m.nn.functional.lp_pool2d(x, 1, 2),
}


@pytest.mark.parametrize("name", sorted(LP_POOLS))
def test_lp_pooling_matches_pytorch(name):
    values = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    results = []
    for m in (strata, torch):
        x = m.tensor(values, requires_grad=True)
        y = LP_POOLS[name](m, x)
        y.sum().backward()
        results.append((y, x.grad))
    assert_same(*results)
    assert repr(strata.nn.LPPool2d(2, 3, stride=1)) == repr(torch.nn.LPPool2d(2, 3, stride=1))


MULTI_MARGIN_ERRORS = {
    "p": lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, p=3),
    "target_range": lambda m, x, t: m.nn.functional.multi_margin_loss(x, m.tensor([0, 5, 1])),
    "target_size": lambda m, x, t: m.nn.functional.multi_margin_loss(x, t[:2]),
    "weight_size": lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, weight=m.ones(3)),
    "integer_input": lambda m, x, t: m.nn.functional.multi_margin_loss(x.long(), t),
    "3d_input": lambda m, x, t: m.nn.functional.multi_margin_loss(x.view(3, 2, 2), t),
}


@pytest.mark.parametrize("name", sorted(MULTI_MARGIN_ERRORS))
def test_multi_margin_loss_errors_match_pytorch(name):
    errors = []
    for m in (strata, torch):
        x, t = m.arange(12.0).view(3, 4) / 7, m.tensor([0, 3, 1])
        with pytest.raises(Exception) as err:
            MULTI_MARGIN_ERRORS[name](m, x, t)
        errors.append((type(err.value).__name__, str(err.value)))
    assert errors[0] == errors[1]


def test_map_applies_a_python_function_pairwise_in_place():
    seen = []
    for m in (strata, torch):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        out = x.map_(m.tensor([10.0, 20.0]), lambda a, b: a * b + 0.5)
        errors = []
        for bad in (lambda m: m.tensor([1.0, 2.0], requires_grad=True).map_(m.ones(2), max),
                    lambda m: m.tensor([1.0, 2.0]).map_(m.tensor([1, 2]), max),
                    lambda m: m.tensor([1.0, 2.0]).map_(m.ones(3), max)):
            with pytest.raises((RuntimeError, TypeError)) as err:
                bad(m)
            errors.append((type(err.value).__name__, str(err.value)))
        seen.append((out is x, x.tolist(), errors))
    assert seen[0] == seen[1]


# Note [Nested-tensor encoder]: an encoder in inference with a right-padded key padding mask
def _encoder_outputs(m):
    rng = np.random.default_rng(1)
    layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    encoder = m.nn.TransformerEncoder(layer, 2, norm=m.nn.LayerNorm(8))
    with m.no_grad():
        for p in encoder.parameters():
            p.copy_(m.tensor(rng.normal(0, 0.3, tuple(p.shape)).astype(np.float32)))
    x = m.tensor(rng.normal(0, 1, (3, 4, 8)).astype(np.float32))
    right = m.tensor([[False, False, False, True], [False] * 4, [False, True, True, True]])
    left = m.tensor([[True, False, False, False], [False] * 4, [False] * 4])
    outs = []
    for training, grad in ((False, False), (True, False), (False, True)):
        encoder.train(training)
        with m.set_grad_enabled(grad):
            outs += [encoder(x, src_key_padding_mask=right), encoder(x, src_key_padding_mask=left)]
    return [o.detach() for o in outs], (encoder.enable_nested_tensor, encoder.use_nested_tensor,
                                        layer.activation_relu_or_gelu)


def test_transformer_encoder_pads_with_zeros_in_inference():
    s, t = _encoder_outputs(strata), _encoder_outputs(torch)
    assert s[1] == t[1] == (True, True, 1)
    assert_same(s[0], t[0], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("layer_kwargs", [{}, {"batch_first": True, "norm_first": True},
                                          {"batch_first": True, "activation": torch.nn.SiLU}])
def test_transformer_encoder_nested_tensor_warning(layer_kwargs):
    seen = []
    for m in (strata, torch):
        kwargs = dict(layer_kwargs)
        if "activation" in kwargs:
            kwargs["activation"] = m.nn.SiLU()
        layer = m.nn.TransformerEncoderLayer(8, 2, 16, **kwargs)
        with pytest.warns(UserWarning) as record:
            encoder = m.nn.TransformerEncoder(layer, 1)
        seen.append(([str(w.message) for w in record], encoder.use_nested_tensor))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("channels", [1, 4])
def test_gradient_penalty_through_prelu_reaches_earlier_biases(channels):
    """``_prelu_kernel_backward`` has its own derivative row, as in derivatives.yaml: the
    gradient of PReLU's input gradient with respect to its input is zeros (not nothing), so a
    penalty on ``dL/dx`` gives the layer before PReLU a zero bias gradient, as PyTorch."""
    def run(m):
        rng = np.random.default_rng(0)
        first, act, last = m.nn.Linear(4, 4), m.nn.PReLU(channels), m.nn.Linear(4, 1)
        params = [*first.parameters(), *act.parameters(), *last.parameters()]
        with m.no_grad():
            for p in params:
                p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
        x = m.tensor(rng.standard_normal((5, 4)).astype(np.float32)).requires_grad_()
        (g,) = m.autograd.grad(last(act(first(x))).sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        return [p.grad for p in params]
    for s, t in zip(run(strata), run(torch), strict=True):
        assert (s is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_prelu_second_derivatives_match_finite_differences():
    x = strata.tensor(np.random.default_rng(1).standard_normal((3, 4, 2)) + 0.1,
                      dtype=strata.float64).requires_grad_()
    w = strata.tensor([0.25, -0.5, 0.75, 0.1], dtype=strata.float64).requires_grad_()
    f = strata.nn.functional.prelu
    assert strata.autograd.gradcheck(f, (x, w))
    assert strata.autograd.gradgradcheck(f, (x, w))


# bfloat16 training (CPU autocast keeps norms' inputs in bfloat16, their parameters float32)
def _half_norms(m, dtype_name):
    F, half = m.nn.functional, getattr(m, dtype_name)
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((4, 6, 5, 5)).astype(np.float32)).to(half)
    x.requires_grad_()
    w = m.tensor(rng.random(6).astype(np.float32) + 0.5, requires_grad=True)
    b = m.tensor(rng.random(6).astype(np.float32), requires_grad=True)
    g = m.tensor(rng.standard_normal((4, 6, 5, 5)).astype(np.float32)).to(half)
    outs = [F.rms_norm(x * 0.01, (5,)),                   # default eps: float32's, not half's
            F.rms_norm(x, (5, 5), m.ones(5, 5)), m.nn.RMSNorm(5).to(half)(x * 0.01),
            F.group_norm(x, 3, w, b), F.group_norm(x, 2, w.to(half), b.to(half)),
            F.group_norm(x, 3)]
    bn = F.batch_norm(x, None, None, w, b, training=True)
    bn.backward(g)
    return outs + [bn, x.grad, w.grad, b.grad]


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_half_inputs_through_norms_match_torch(dtype_name):
    """rms_norm's default eps is float32's epsilon for a half input (ATen's composite runs in
    float32); group_norm's output keeps the input's half dtype with float32 weights and is
    rounded once; batch norm's weight and bias gradients are summed in float32."""
    for got, want in zip(_half_norms(strata, dtype_name), _half_norms(torch, dtype_name)):
        assert_same(got, want)


def _functional_call_parametrized(m):
    lin = m.nn.Linear(4, 3)
    with m.no_grad():
        lin.weight.copy_(m.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10 - 0.5))
        lin.bias.zero_()
    m.nn.utils.parametrizations.weight_norm(lin)
    x = m.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    given = m.func.functional_call(lin, {"weight": m.ones(3, 4), "bias": m.ones(3)}, (x,))
    originals = m.func.functional_call(
        lin, {"parametrizations.weight.original0": m.ones(3, 1),
              "parametrizations.weight.original1": m.ones(3, 4)}, (x,))
    return given, originals, lin(x), lin.weight


def test_functional_call_on_a_parametrized_module_matches_torch():
    """A value for a parametrized name ("weight" of a weight_norm'ed Linear) goes through the
    parametrization's setter (right_inverse) and back, as PyTorch's swap_tensor does; it was
    ignored (an instance attribute under the class's property)."""
    for got, want in zip(_functional_call_parametrized(strata),
                         _functional_call_parametrized(torch)):
        assert_same(got, want, atol=1e-6, rtol=1e-6)


_AA_SIZES = [{"size": (5, 4)}, {"size": (9, 20)}, {"scale_factor": 0.3},
             {"scale_factor": (0.5, 2.5)}, {"size": (17, 6), "align_corners": True},
             {"size": (4, 13)}]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("options", _AA_SIZES, ids=str)
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_antialiased_interpolate_matches_torch(mode, options, dtype_name):
    """F.interpolate(antialias=True) (torchvision's Resize default): values and gradients."""
    x = np.random.default_rng(0).standard_normal((2, 3, 17, 13))
    results = []
    for m in (strata, torch):
        t = m.tensor(x, dtype=getattr(m, dtype_name), requires_grad=True)
        y = m.nn.functional.interpolate(t, mode=mode, antialias=True, **options)
        weights = m.arange(y.numel(), dtype=y.dtype).reshape(y.shape).sin()
        (grad,) = m.autograd.grad((y * weights).sum(), t)
        results.append((y, grad))
    for got, want in zip(*results):
        assert_same(got, want, atol=2e-6 if dtype_name == "float32" else 1e-12, rtol=1e-5)


def test_antialiased_interpolate_errors_match_torch():
    for m in (strata, torch):
        F = m.nn.functional
        with pytest.raises(ValueError, match="Anti-alias option is restricted"):
            F.interpolate(m.ones(1, 1, 4, 4), size=2, mode="nearest", antialias=True)
        with pytest.raises(ValueError, match="Anti-alias option is restricted"):
            F.interpolate(m.ones(1, 4, 4), size=2, mode="bilinear", antialias=True)
        for dtype, name in ((m.int64, "Long"), (m.bfloat16, "BFloat16"), (m.float16, "Half")):
            with pytest.raises(NotImplementedError, match=f"not implemented for '{name}'"):
                F.interpolate(m.ones(1, 1, 4, 4, dtype=dtype), size=2, mode="bilinear",
                              antialias=True)
