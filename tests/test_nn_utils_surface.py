"""nn.utils surface against PyTorch: parametrize and parametrizations (weight/spectral norm,
orthogonal), the hook-based weight_norm/spectral_norm, pruning, conv/linear + BN fusion."""

import numpy as np
import pytest
import strata
import torch
import torch.nn.utils.prune  # noqa: F401  (torch does not import it with nn.utils)
from helpers import assert_same


def _same_module(kind, *args, **kwargs):
    """The same layer in both libraries, with strata's initial parameters copied to torch's."""
    s_mod = getattr(strata.nn, kind)(*args, **kwargs)
    t_mod = getattr(torch.nn, kind)(*args, **kwargs)
    with torch.no_grad():
        for name, p in s_mod.named_parameters():
            dict(t_mod.named_parameters())[name].copy_(torch.tensor(p.detach().numpy()))
    return s_mod, t_mod


def _step_and_compare(pair, x, names, steps=3):
    """Train both a few SGD steps on the same loss; parameters and outputs agree throughout."""
    outs = []
    for m, module in zip((strata, torch), pair):
        opt = m.optim.SGD(module.parameters(), lr=0.1)
        xs = m.tensor(x)
        for _ in range(steps):
            y = module(xs)
            loss = (y * m.arange(y.numel()).reshape(y.shape) / y.numel()).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        outs.append([module(xs).detach()] + [dict(module.named_parameters())[n].detach()
                                              for n in names])
    for a, b in zip(*outs):
        assert_same(a, b, atol=1e-5, rtol=1e-4)


class _Symmetric:
    @staticmethod
    def make(m):
        class Symmetric(m.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Symmetric()


def test_register_parametrization_trains_the_original(rng):
    pair = _same_module("Linear", 3, 3)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.parametrize.register_parametrization(module, "weight", _Symmetric.make(m))
        assert type(module).__name__ == "ParametrizedLinear"
        assert m.nn.utils.parametrize.is_parametrized(module, "weight")
        assert m.nn.utils.parametrize.type_before_parametrizations(module) is m.nn.Linear
        assert sorted(dict(module.named_parameters())) == [
            "bias", "parametrizations.weight.original"]
    _step_and_compare(pair, rng.standard_normal((2, 3)).astype(np.float32),
                      ["parametrizations.weight.original"])
    for m, module in zip((strata, torch), pair):
        w = module.weight
        assert (w == w.T).all()
        with m.nn.utils.parametrize.cached():
            assert module.weight is module.weight
        module.weight = m.eye(3) * 2            # right_inverse stores triu(A)
        assert (module.parametrizations.weight.original == m.eye(3) * 2).all()
        m.nn.utils.parametrize.remove_parametrizations(module, "weight")
        assert type(module) is m.nn.Linear and (module.weight == m.eye(3) * 2).all()
        assert isinstance(module.weight, m.nn.Parameter)


def test_parametrization_errors():
    for m in (strata, torch):
        class Reshape(m.nn.Module):
            def forward(self, X):
                return X.reshape(-1)
        with pytest.raises(ValueError, match="may not change the shape"):
            m.nn.utils.parametrize.register_parametrization(m.nn.Linear(2, 2), "weight",
                                                            Reshape())
        with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
            m.nn.utils.parametrize.register_parametrization(m.nn.Linear(2, 2), "nothing",
                                                            Reshape())
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            m.nn.utils.parametrize.remove_parametrizations(m.nn.Linear(2, 2), "weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim, rng):
    pair = _same_module("Conv1d", 2, 3, 3) if dim == 1 else _same_module("Linear", 4, 3)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.parametrizations.weight_norm(module, dim=dim)
    x = rng.standard_normal((2, 2, 5) if dim == 1 else (2, 4)).astype(np.float32)
    _step_and_compare(pair, x, ["parametrizations.weight.original0",
                                "parametrizations.weight.original1"])


def test_weight_norm_old_hooks_and_state_dict(rng):
    pair = _same_module("Linear", 4, 3)
    for m, module in zip((strata, torch), pair):
        with pytest.warns(FutureWarning, match="deprecated in favor of"):
            m.nn.utils.weight_norm(module)
        assert sorted(dict(module.named_parameters())) == ["bias", "weight_g", "weight_v"]
    _step_and_compare(pair, rng.standard_normal((2, 4)).astype(np.float32),
                      ["weight_g", "weight_v"])
    old = pair[0].state_dict()
    fresh = strata.nn.utils.parametrizations.weight_norm(strata.nn.Linear(4, 3))
    fresh.load_state_dict(old)                 # old names load into the parametrization
    np.testing.assert_allclose(fresh(strata.ones(1, 4)).detach().numpy(),
                               pair[0](strata.ones(1, 4)).detach().numpy(), rtol=1e-6)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.remove_weight_norm(module)
        assert sorted(dict(module.named_parameters())) == ["bias", "weight"]
    assert_same(pair[0].weight.detach(), pair[1].weight.detach(), atol=1e-6)


def _copy_power_vectors(s_holder, t_holder, u_name, v_name):
    with torch.no_grad():
        getattr(t_holder, u_name).copy_(torch.tensor(getattr(s_holder, u_name).numpy()))
        getattr(t_holder, v_name).copy_(torch.tensor(getattr(s_holder, v_name).numpy()))


def test_spectral_norm_parametrization(rng):
    pair = _same_module("Linear", 5, 4)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.parametrizations.spectral_norm(module)
    _copy_power_vectors(pair[0].parametrizations.weight[0], pair[1].parametrizations.weight[0],
                        "_u", "_v")     # random starts differ; the iterations then agree
    _step_and_compare(pair, rng.standard_normal((3, 5)).astype(np.float32),
                      ["parametrizations.weight.original"])
    sigma = np.linalg.svd(pair[0].weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1) < 0.05     # one power step per forward: sigma trails the weight


def test_spectral_norm_old_hooks(rng):
    pair = _same_module("Linear", 5, 4)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.spectral_norm(module)
        assert sorted(dict(module.named_buffers())) == ["weight_u", "weight_v"]
    _copy_power_vectors(pair[0], pair[1], "weight_u", "weight_v")
    _step_and_compare(pair, rng.standard_normal((3, 5)).astype(np.float32), ["weight_orig"])
    for m, module in zip((strata, torch), pair):
        module.eval()
        m.nn.utils.remove_spectral_norm(module)
        assert sorted(dict(module.named_parameters())) == ["bias", "weight"]


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_parametrization(orthogonal_map, rng):
    pair = _same_module("Linear", 4, 4)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.parametrizations.orthogonal(module, orthogonal_map=orthogonal_map)
    _step_and_compare(pair, rng.standard_normal((2, 4)).astype(np.float32),
                      ["parametrizations.weight.original"])
    w = pair[0].weight.detach().numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-5)


def test_orthogonal_rectangular_keeps_orthonormal_rows(rng):
    module = strata.nn.utils.parametrizations.orthogonal(strata.nn.Linear(5, 3))
    w = module.weight.detach().numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-5)


def test_prune_l1_and_ln_structured_and_remove(rng):
    pair = _same_module("Linear", 6, 4)
    for m, module in zip((strata, torch), pair):
        m.nn.utils.prune.l1_unstructured(module, "weight", amount=0.3)
        m.nn.utils.prune.l1_unstructured(module, "weight", amount=2)      # a container
        m.nn.utils.prune.ln_structured(module, "weight", amount=0.25, n=2, dim=0)
        assert m.nn.utils.prune.is_pruned(module)
        assert sorted(dict(module.named_buffers())) == ["weight_mask"]
    assert_same(pair[0].weight_mask, pair[1].weight_mask)
    _step_and_compare(pair, rng.standard_normal((2, 6)).astype(np.float32), ["weight_orig"])
    for m, module in zip((strata, torch), pair):
        m.nn.utils.prune.remove(module, "weight")
        assert not m.nn.utils.prune.is_pruned(module) and "weight_mask" not in \
            dict(module.named_buffers())
    assert_same(pair[0].weight.detach(), pair[1].weight.detach(), atol=1e-6)


def test_prune_global_custom_and_random(rng):
    pairs = [_same_module("Linear", 5, 4), _same_module("Linear", 4, 3)]
    masks = []
    for i, m in enumerate((strata, torch)):
        mods = [p[i] for p in pairs]
        m.nn.utils.prune.global_unstructured([(mods[0], "weight"), (mods[1], "weight")],
                                             pruning_method=m.nn.utils.prune.L1Unstructured,
                                             amount=10)
        m.nn.utils.prune.custom_from_mask(mods[1], "bias", m.tensor([1.0, 0.0, 1.0]))
        masks.append([mods[0].weight_mask, mods[1].weight_mask, mods[1].bias])
    for a, b in zip(*masks):
        assert_same(a, b)
    module = strata.nn.utils.prune.random_unstructured(strata.nn.Linear(10, 10), "weight", 0.4)
    assert int((module.weight_mask == 0).sum()) == 40
    module = strata.nn.utils.prune.random_structured(strata.nn.Linear(10, 6), "weight", 2, dim=0)
    assert int((module.weight_mask.sum(1) == 0).sum()) == 2
    for m in (strata, torch):
        with pytest.raises(ValueError, match="should either be a float in the range"):
            m.nn.utils.prune.l1_unstructured(m.nn.Linear(2, 2), "weight", amount=1.5)


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval(transpose, rng):
    kind = "ConvTranspose2d" if transpose else "Conv2d"
    convs = _same_module(kind, 3, 4, 3)
    bns = _same_module("BatchNorm2d", 4)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    outs = []
    for m, conv, bn in zip((strata, torch), convs, bns):
        with m.no_grad():
            bn.running_mean.copy_(m.arange(4.0) / 4)
            bn.running_var.copy_(m.arange(1.0, 5.0))
        conv.eval()
        bn.eval()
        fused = m.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        np.testing.assert_allclose(fused(m.tensor(x)).detach().numpy(),
                                   bn(conv(m.tensor(x))).detach().numpy(), atol=1e-5)
        outs.append(fused(m.tensor(x)).detach())
    assert_same(*outs, atol=1e-5)
    linears, bn1 = _same_module("Linear", 3, 4), _same_module("BatchNorm1d", 4)
    for m, lin, bn in zip((strata, torch), linears, bn1):
        lin.eval()
        bn.eval()
        fused = m.nn.utils.fusion.fuse_linear_bn_eval(lin, bn)
        np.testing.assert_allclose(fused(m.ones(2, 3)).detach().numpy(),
                                   bn(lin(m.ones(2, 3))).detach().numpy(), atol=1e-6)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        strata.nn.utils.fuse_conv_bn_eval(strata.nn.Conv2d(1, 1, 1), strata.nn.BatchNorm2d(1))


def test_orthogonal_without_trivialization_takes_assignments(rng):
    """The Householder parametrization stores an assigned orthogonal matrix as its geqrf form."""
    q = np.linalg.qr(rng.standard_normal((4, 3)))[0].astype(np.float32)
    weights = []
    for m in (strata, torch):
        module = m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 4), use_trivialization=False)
        module.weight = m.tensor(q)
        weights.append(module.weight.detach())
    assert_same(*weights, atol=1e-6)
    np.testing.assert_allclose(np.abs(weights[0].numpy()), np.abs(q), atol=1e-6)
    for m in (strata, torch):
        module = m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), "weight", "cayley",
                                                        use_trivialization=False)
        with pytest.raises(NotImplementedError, match="not possible to assign"):
            module.weight = m.eye(3)


def test_transfer_parametrizations_and_params():
    for m in (strata, torch):
        source = m.nn.utils.parametrizations.weight_norm(m.nn.Linear(3, 2))
        target = m.nn.Linear(3, 2)
        m.nn.utils.parametrize.transfer_parametrizations_and_params(source, target, "weight")
        assert m.nn.utils.parametrize.is_parametrized(target, "weight")
        assert target.parametrizations.weight.original0 is \
            source.parametrizations.weight.original0
        x = m.ones(1, 3)
        assert m.allclose(target(x) - target.bias, source(x) - source.bias)   # rounding: bias
