"""Audit of issue 11 §2-§4 against PyTorch 2.13: the corners the first round of tests missed
(1-D and 0-D targets of index ops, non-tensor operands, alias version checks, ...)."""

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check_outcome

# --- out-of-range indices on 0-D, 1-D and 2-D targets: class, wording, nothing written -------

_INDEX_OPS = {
    "index_add_": lambda x, i, s: x.index_add_(0, i, s),
    "index_copy_": lambda x, i, s: x.index_copy_(0, i, s),
    "index_fill_": lambda x, i, s: x.index_fill_(0, i, 1.0),
    "index_put_": lambda x, i, s: x.index_put_((i,), s),
    "index_put_accumulate": lambda x, i, s: x.index_put_((i,), s, accumulate=True),
    "index_select": lambda x, i, s: x.index_select(0, i),
    "scatter_": lambda x, i, s: x.scatter_(0, i, s),
    "scatter_add_": lambda x, i, s: x.scatter_add_(0, i, s),
    "scatter_reduce_": lambda x, i, s: x.scatter_reduce_(0, i, s, "amax"),
    "gather": lambda x, i, s: x.gather(0, i),
    "take": lambda x, i, s: x.take(i),
    "put_": lambda x, i, s: x.put_(i, s),
    "put_accumulate": lambda x, i, s: x.put_(i, s, accumulate=True),
}


@pytest.mark.parametrize("shape", [(), (3,), (3, 4)], ids=["0d", "1d", "2d"])
@pytest.mark.parametrize("bad", [5, -4])
@pytest.mark.parametrize("name", sorted(_INDEX_OPS))
def test_out_of_range_index_on_any_rank(name, bad, shape):
    outcomes = []
    for m in (strata, torch):
        x = m.zeros(shape)
        if name in ("take", "put_", "put_accumulate") or len(shape) < 2:
            flat_bad = bad * 4 if len(shape) == 2 else bad   # out of range of all 12 elements
            index = m.tensor([flat_bad]) if shape else m.tensor(bad)
            source = m.ones(1) if shape else m.ones(())
        else:
            index, source = m.tensor([[bad, 0, 0, 0]]), m.ones(1, 4)
            if name.startswith("index"):
                index = m.tensor([bad])
        with pytest.raises(Exception) as err:
            _INDEX_OPS[name](x, index, source)
        assert not x.any(), "an op that raised wrote into its target"
        outcomes.append((type(err.value).__name__, str(err.value).replace("torch", "strata")))
    assert outcomes[0] == outcomes[1]


# --- the LU family: linalg.lu / lu_factor(_ex) / lu_solve, lu_unpack, torch.lu ---------------

_LU_MATRICES = {
    "square": np.random.default_rng(1).standard_normal((4, 4)),
    "wide": np.random.default_rng(2).standard_normal((3, 5)),
    "tall": np.random.default_rng(3).standard_normal((5, 3)),
    "batch": np.random.default_rng(4).standard_normal((2, 3, 3)).astype(np.float32),
    "singular": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
    "ties": np.array([[1.0, 2.0], [-1.0, 3.0]]),     # |pivot| ties: LAPACK takes the first row
    "empty": np.zeros((0, 3)),
}


@pytest.mark.parametrize("name", sorted(_LU_MATRICES))
def test_lu_factorizations_match_torch(name):
    a = _LU_MATRICES[name]
    check_outcome(lambda m, x: tuple(m.linalg.lu(x)), a, atol=1e-6, rtol=1e-5)
    check_outcome(lambda m, x: tuple(m.linalg.lu_factor_ex(x)), a, atol=1e-6, rtol=1e-5)
    check_outcome(lambda m, x: tuple(m.lu(x, get_infos=True)), a, atol=1e-6, rtol=1e-5)
    check_outcome(lambda m, x: tuple(m.lu_unpack(*m.linalg.lu_factor_ex(x)[:2])), a,
                  atol=1e-6, rtol=1e-5)
    check_outcome(lambda m, x: m.linalg.lu_factor(x).pivots, a)   # raises when singular


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_values_and_gradients(left, adjoint):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))
    b = b if left else b.T.copy()
    grads = []
    for m in (strata, torch):
        A, B = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        factors, pivots = m.linalg.lu_factor(A)
        x = m.linalg.lu_solve(factors, pivots, B, left=left, adjoint=adjoint)
        (x * m.arange(x.numel(), dtype=x.dtype).reshape(x.shape)).sum().backward()
        grads.append((x.detach(), A.grad, B.grad))
    assert_same(grads[0], grads[1], atol=1e-9, rtol=1e-9)


def test_lu_gradients_and_torch_lu_solve():
    a = np.random.default_rng(6).standard_normal((4, 3))
    outs = []
    for m in (strata, torch):
        A = m.tensor(a, requires_grad=True)
        P, L, U = m.linalg.lu(A)
        ((L * 2).sum() + (U * U).sum()).backward()
        b = m.tensor(np.arange(6.0).reshape(3, 2))
        square = m.tensor(a[:3])
        solved = b.lu_solve(*square.lu())
        outs.append((P, L.detach(), U.detach(), A.grad, solved, m.lu_solve(b, *m.lu(square))))
    assert_same(outs[0], outs[1], atol=1e-9, rtol=1e-9)


def _lu_errors():
    a = np.random.default_rng(7).standard_normal((3, 3))
    return {
        "lu 1-D": lambda m: m.linalg.lu(m.ones(3)),
        "lu_factor 1-D": lambda m: m.linalg.lu_factor(m.ones(3)),
        "lu int": lambda m: m.linalg.lu(m.ones(3, 3, dtype=m.int64)),
        "lu half": lambda m: m.linalg.lu_factor(m.ones(3, 3, dtype=m.float16)),
        "no pivoting": lambda m: m.linalg.lu(m.tensor(a), pivot=False),
        "singular": lambda m: m.linalg.lu_factor(m.ones(3, 3)),
        "singular batch": lambda m: m.linalg.lu_factor(m.stack([m.eye(3), m.ones(3, 3)])),
        "check_errors": lambda m: m.linalg.lu_factor_ex(m.zeros(2, 2), check_errors=True),
        "solve B 1-D": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(a)), m.ones(3)),
        "solve shapes": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(a)),
                                                    m.ones(2, 3, dtype=m.float64)),
        "solve pivots dtype": lambda m: m.linalg.lu_solve(
            m.linalg.lu_factor(m.tensor(a))[0], m.ones(3, dtype=m.int64),
            m.ones(3, 1, dtype=m.float64)),
        "solve dtypes": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(a)),
                                                    m.ones(3, 1)),
        "solve pivots count": lambda m: m.linalg.lu_solve(
            m.linalg.lu_factor(m.tensor(a))[0], m.ones(2, dtype=m.int32),
            m.ones(3, 1, dtype=m.float64)),
        "unpack pivots dtype": lambda m: m.lu_unpack(m.tensor(a), m.ones(3, dtype=m.int64)),
    }


@pytest.mark.parametrize("case", sorted(_lu_errors()))
def test_lu_errors_match_torch(case):
    fn = _lu_errors()[case]
    raised = []
    for m in (strata, torch):
        with pytest.raises(Exception) as err:
            fn(m)
        raised.append((type(err.value).__name__, str(err.value).replace("torch.", "strata.")))
    assert raised[0] == raised[1]


def test_slogdet_and_logdet_of_singular_matrices_are_exact():
    """Both from LU, as ATen: a zero pivot gives sign 0 and -inf, not a rounding residue."""
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    swapped = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    for a in (singular, swapped, singular.astype(np.float32)):
        check_outcome(lambda m, x: tuple(m.linalg.slogdet(x)), a)
        check_outcome(lambda m, x: m.logdet(x), a)


def _message(fn):
    for m in (strata, torch):
        with pytest.raises(Exception) as err:
            fn(m)
        yield type(err.value).__name__, str(err.value).replace("torch.", "strata.")


_LINALG_ERRORS = {
    "multi_dot none": lambda m: m.linalg.multi_dot([]),
    "multi_dot one": lambda m: m.linalg.multi_dot([m.ones(2, 2)]),
    "multi_dot first 3-D": lambda m: m.linalg.multi_dot([m.ones(2, 2, 2), m.ones(2, 2)]),
    "multi_dot last 3-D": lambda m: m.linalg.multi_dot([m.ones(2, 2), m.ones(2, 2, 2)]),
    "multi_dot middle 1-D": lambda m: m.linalg.multi_dot([m.ones(2, 2), m.ones(2),
                                                          m.ones(2, 2)]),
    "multi_dot dtypes": lambda m: m.linalg.multi_dot([m.ones(2, 2),
                                                      m.ones(2, 2, dtype=m.int64)]),
    "multi_dot shapes": lambda m: m.linalg.multi_dot([m.ones(3, 2), m.ones(3, 2), m.ones(2)]),
    "multi_dot vectors": lambda m: m.linalg.multi_dot([m.ones(3), m.ones(2)]),
    "lstsq int": lambda m: m.linalg.lstsq(m.ones(3, 3, dtype=m.int64),
                                          m.ones(3, 1, dtype=m.int64)),
    "lstsq half": lambda m: m.linalg.lstsq(m.ones(3, 3).half(), m.ones(3, 1).half()),
    "lstsq 1-D": lambda m: m.linalg.lstsq(m.ones(3), m.ones(3, 1)),
    "matrix_rank int": lambda m: m.linalg.matrix_rank(m.ones(3, 3, dtype=m.int64)),
    "solve_triangular B 1-D": lambda m: m.linalg.solve_triangular(m.eye(3), m.ones(3),
                                                                  upper=True),
    "solve_triangular int": lambda m: m.linalg.solve_triangular(
        m.eye(3, dtype=m.int64), m.ones(3, 2, dtype=m.int64), upper=True),
    "sparse size rank": lambda m: m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 2)),
}


@pytest.mark.parametrize("case", sorted(_LINALG_ERRORS))
def test_linalg_and_sparse_errors_match_torch(case):
    strata_error, torch_error = _message(_LINALG_ERRORS[case])
    assert strata_error == torch_error


# --- adaptive 3-d pooling (the 3-d family of issue 11 §3: Conv3d, MaxPool3d, AvgPool3d, ...) --

@pytest.mark.parametrize("kind", ["Avg", "Max"])
@pytest.mark.parametrize("shape,size", [((2, 3, 5, 7, 6), (2, 3, 4)), ((3, 4, 4, 5), 1),
                                        ((1, 2, 6, 5, 4), (None, 2, 3)),
                                        ((0, 2, 3, 3, 3), 2)])
def test_adaptive_pool3d_values_indices_and_gradients(kind, shape, size):
    x = np.random.default_rng(8).standard_normal(shape)
    outs = []
    for m in (strata, torch):
        t = m.tensor(x, requires_grad=True)
        pool = getattr(m.nn, f"Adaptive{kind}Pool3d")(size, **(
            {"return_indices": True} if kind == "Max" else {}))
        result = pool(t)
        values = result[0] if kind == "Max" else result
        (values * m.arange(values.numel(), dtype=values.dtype).reshape(values.shape)).sum() \
            .backward()
        outs.append((result, t.grad, repr(pool)))
    assert_same(outs[0][:2], outs[1][:2], atol=1e-12, rtol=1e-12)
    assert outs[0][2] == outs[1][2]


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("case", ["3-D input", "sizes", "negative", "empty dim", "int"])
def test_adaptive_pool3d_errors_match_torch(kind, case):
    inputs = {"3-D input": ((2, 3, 4), 2), "sizes": ((2, 3, 4, 5), (2, 3)),
              "negative": ((1, 2, 3, 4, 5), (2, -1, 2)), "empty dim": ((2, 3, 0, 5), 2),
              "int": ((1, 2, 3, 4, 5), 2)}
    shape, size = inputs[case]

    def call(m):
        x = m.ones(shape, dtype=m.int64 if case == "int" else m.float32)
        return getattr(m.nn.functional, f"adaptive_{kind}_pool3d")(x, size)
    strata_error, torch_error = _message(call)
    assert strata_error == torch_error


# --- Conv3d / ConvTranspose3d options, with torch's parameters copied in ----------------------

@pytest.mark.parametrize("make", [
    lambda m: m.nn.Conv3d(3, 6, 3),
    lambda m: m.nn.Conv3d(3, 6, 3, stride=2, padding=1),
    lambda m: m.nn.Conv3d(3, 6, (3, 2, 1), padding="same", dilation=(1, 2, 1)),
    lambda m: m.nn.Conv3d(3, 6, 3, groups=3, padding=(1, 0, 2), bias=False),
    lambda m: m.nn.Conv3d(3, 2, 3, padding=1, padding_mode="circular"),
    lambda m: m.nn.Conv3d(3, 2, 3, padding=(1, 2, 1), padding_mode="reflect"),
    lambda m: m.nn.Conv3d(3, 2, 3, padding=1, padding_mode="replicate"),
    lambda m: m.nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, output_padding=1),
    lambda m: m.nn.ConvTranspose3d(3, 4, 2, dilation=2),
], ids=["plain", "stride-pad", "same", "groups", "circular", "reflect", "replicate",
        "transpose", "transpose-dilated"])
def test_conv3d_options_values_and_gradients(make):
    x = np.random.default_rng(9).standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    t_layer = make(torch)
    s_layer = make(strata)
    s_layer.load_state_dict({k: strata.tensor(v.detach().numpy())
                             for k, v in t_layer.state_dict().items()})
    outs = []
    for m, layer in ((strata, s_layer), (torch, t_layer)):
        t = m.tensor(x, requires_grad=True)
        y = layer(t)
        (y * y).sum().backward()
        outs.append((y, t.grad, layer.weight.grad, repr(layer)))
    assert_same(outs[0][:3], outs[1][:3], atol=1e-3, rtol=1e-4)
    assert outs[0][3] == outs[1][3]


def test_ctc_loss_unbatched_with_0d_lengths():
    log_probs = np.log(np.random.default_rng(10).dirichlet(np.ones(4), size=6)).astype(np.float32)
    for reduction in ("mean", "sum", "none"):
        check_outcome(lambda m, lp, r=reduction: m.nn.functional.ctc_loss(
            lp, m.tensor([1, 2]), m.tensor(6), m.tensor(2), reduction=r), log_probs)


_SAMPLING_ERRORS = {
    "grid dtype": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 2, dtype=m.float64), align_corners=False),
    "grid dtype 3-D": lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, 2, dtype=m.float64), m.zeros(1, 1, 1, 1, 3), align_corners=False),
    "affine batch": lambda m: m.nn.functional.affine_grid(m.ones(2, 2, 3), (3, 3, 4, 5),
                                                          align_corners=False),
    "affine batch 3-D": lambda m: m.nn.functional.affine_grid(m.ones(2, 3, 4), (3, 3, 4, 5, 6),
                                                              align_corners=False),
}


@pytest.mark.parametrize("case", sorted(_SAMPLING_ERRORS))
def test_grid_sample_and_affine_grid_errors_match_torch(case):
    strata_error, torch_error = _message(_SAMPLING_ERRORS[case])
    assert strata_error == torch_error


# --- Lazy modules: a checkpoint loads into them; the InstanceNorm family -----------------------

def _lazy_after_load(m, lazy, eager, shape):
    m.manual_seed(0)
    source, module = eager(m), lazy(m)
    module.load_state_dict(source.state_dict())
    loaded = (type(module).__name__, [tuple(p.shape) for p in module.parameters()],
              [tuple(b.shape) for b in module.buffers()])
    x = m.tensor(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape))
    return loaded, type(module).__name__, module(x), source(x)


@pytest.mark.parametrize("lazy,eager,shape", [
    (lambda m: m.nn.LazyLinear(3), lambda m: m.nn.Linear(4, 3), (2, 4)),
    (lambda m: m.nn.LazyConv2d(4, 3), lambda m: m.nn.Conv2d(2, 4, 3), (1, 2, 5, 5)),
    (lambda m: m.nn.LazyBatchNorm1d(), lambda m: m.nn.BatchNorm1d(3), (4, 3)),
], ids=["linear", "conv2d", "batchnorm"])
def test_lazy_module_loads_a_checkpoint_like_torch(lazy, eager, shape):
    s, t = _lazy_after_load(strata, lazy, eager, shape), _lazy_after_load(torch, lazy, eager, shape)
    assert s[:2] == t[:2]
    np.testing.assert_array_equal(s[2].detach().numpy(), s[3].detach().numpy())  # the source's
    assert tuple(s[2].shape) == tuple(t[2].shape)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_lazy_instance_norm_becomes_instance_norm(dims):
    shape = (2, 3) + (4,) * dims
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    outs = []
    for m in (strata, torch):
        module = getattr(m.nn, f"LazyInstanceNorm{dims}d")()
        before = repr(module)
        y = module(m.tensor(x))
        outs.append((before, repr(module), type(module).__name__, y, module.running_mean))
    assert outs[0][:3] == outs[1][:3]
    assert_same(outs[0][3:], outs[1][3:])


def test_version_module_without_the_alias():
    """``import strata as torch`` has ``torch.version`` too, with strata's own version (the
    alias reports the PyTorch API level: tests/test_cli_run.py)."""
    assert strata.version.__version__ == strata.__version__
    for name in ("cuda", "hip", "debug"):
        assert getattr(strata.version, name) == getattr(torch.version, name), name
    assert isinstance(strata.version.git_version, str)


# --- joining functions refuse what is not a sequence of tensors, as PyTorch's parser ----------

_JOIN_ERRORS = {
    "cat array": lambda m: m.cat([m.ones(2), np.ones(2)]),
    "cat int": lambda m: m.cat((m.ones(2), 3)),
    "cat tensor": lambda m: m.cat(m.ones(2)),
    "cat empty": lambda m: m.cat([]),
    "stack array": lambda m: m.stack([m.ones(2), np.ones(2)]),
    "stack tensor": lambda m: m.stack(m.ones(2)),
    "stack empty": lambda m: m.stack([]),
    "hstack list": lambda m: m.hstack([m.ones(2), [1.0]]),
    "hstack empty": lambda m: m.hstack([]),
    "vstack none": lambda m: m.vstack([m.ones(2), None]),
    "vstack empty": lambda m: m.vstack([]),
    "row_stack int": lambda m: m.row_stack([m.ones(1), 1]),
    "dstack empty": lambda m: m.dstack([]),
    "dstack int": lambda m: m.dstack((m.ones(2), 1)),
    "column_stack empty": lambda m: m.column_stack([]),
    "concat int": lambda m: m.concat([m.ones(1), 2]),
}


@pytest.mark.parametrize("case", sorted(_JOIN_ERRORS))
def test_joining_non_tensors_raises_torchs_error(case):
    strata_error, torch_error = _message(_JOIN_ERRORS[case])
    assert strata_error == torch_error


def test_joining_functions_still_join():
    for fn in ("cat", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack"):
        check_outcome(lambda m, f=fn: getattr(m, f)((m.arange(3.0), m.ones(3))))
    check_outcome(lambda m: m.stack([m.ones(2)], dim=1, out=m.empty(2, 1)))


# --- packed sequences: batch_first, an initial state, total_length, gradients ------------------

@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_batch_first_with_initial_state(kind, batch_first):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((3, 5, 3) if batch_first else (5, 3, 3)).astype(np.float32)
    torch_rnn = getattr(torch.nn, kind)(3, 4, num_layers=2, bidirectional=True,
                                        batch_first=batch_first)
    strata_rnn = getattr(strata.nn, kind)(3, 4, num_layers=2, bidirectional=True,
                                          batch_first=batch_first)
    strata_rnn.load_state_dict({k: strata.tensor(v.detach().numpy())
                                for k, v in torch_rnn.state_dict().items()})
    outs = []
    for m, rnn in ((strata, strata_rnn), (torch, torch_rnn)):
        inputs = m.tensor(x, requires_grad=True)
        packed = m.nn.utils.rnn.pack_padded_sequence(inputs, m.tensor([5, 3, 4]),
                                                     batch_first=batch_first,
                                                     enforce_sorted=False)
        h0 = m.full((4, 3, 4), 0.1)
        out, hidden = rnn(packed, (h0, h0 * 2) if kind == "LSTM" else h0)
        padded, lengths = m.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first,
                                                             total_length=6)
        hidden = hidden if isinstance(hidden, tuple) else (hidden,)
        (padded.sum() + sum(h.sum() for h in hidden)).backward()
        outs.append((padded, lengths, *hidden, inputs.grad, out.batch_sizes,
                     rnn.weight_hh_l1_reverse.grad))
    assert_same(outs[0], outs[1], atol=1e-5, rtol=1e-4)


def test_load_state_dict_pre_hook_gets_the_module_first():
    """The public hook's signature is PyTorch's (module, state_dict, prefix, ...)."""
    seen = []
    for m in (strata, torch):
        model = m.nn.Sequential(m.nn.Linear(2, 2))
        layer = model[0]
        handle = layer.register_load_state_dict_pre_hook(
            lambda module, state_dict, prefix, *rest: seen.append(
                (module is layer, prefix, sorted(state_dict), len(rest))))
        model.load_state_dict(model.state_dict())
        handle.remove()
        model.load_state_dict(model.state_dict())
    assert seen[0] == seen[1] == (True, "0.", ["0.bias", "0.weight"], 5)
    assert len(seen) == 2
