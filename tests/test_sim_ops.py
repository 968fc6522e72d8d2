"""Every op runs on sim exactly as on the CPU: the op sample database (tests/op_samples) is run
with its inputs on sim, under ``with strata.device("sim")`` so tensors a sample creates land
there too, and compared with the CPU run; then a few training steps of an MLP with Adam.
"""

import numpy as np
import pytest
import strata
from helpers import to_strata
from op_samples import all_samples

pytestmark = pytest.mark.skipif(not strata.sim.is_available(), reason="needs memfd/eventfd")

SAMPLES = all_samples()
# Sparse layouts are CPU-only (the Sim backend has no sparse kernels): tested below.
SPARSE = {"aten::to_sparse.sparse_dim", "aten::to_dense", "aten::coalesce", "aten::sparse_mask"}


def _to_sim(x):
    t = to_strata(x)
    if isinstance(t, strata.Tensor):
        return t.to("sim", non_blocking=True)
    if isinstance(t, (list, tuple)) and t and all(isinstance(a, strata.Tensor) for a in t):
        return type(t)(a.to("sim", non_blocking=True) for a in t)
    return t


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [value]


def _run(sample, to_device):
    try:
        if to_device is None:
            return sample.fn(strata, *(to_strata(x) for x in sample.inputs))
        with strata.device("sim"):
            return sample.fn(strata, *(to_device(x) for x in sample.inputs))
    except Exception as e:  # noqa: BLE001  (the two devices must fail alike)
        return e


def _values(t):
    t = t.detach().cpu()
    return t.float().numpy() if t.dtype is strata.bfloat16 else t.numpy()


@pytest.mark.parametrize("qualname", sorted(q for q in SAMPLES if q not in SPARSE))
def test_op_matches_cpu(qualname):
    for i, sample in enumerate(SAMPLES[qualname]):
        where = f"{qualname} sample {sample.name or i}"
        cpu, sim = _run(sample, None), _run(sample, _to_sim)
        if isinstance(cpu, Exception) or isinstance(sim, Exception):
            assert type(sim) is type(cpu), f"{where}: cpu {cpu!r}, sim {sim!r}"
            continue
        cpu, sim = _flat(cpu), _flat(sim)
        assert len(cpu) == len(sim), where
        for a, b in zip(cpu, sim):
            if not isinstance(a, strata.Tensor):
                assert a == b or (a != a and b != b), where
                continue
            assert b.device.type == "sim" or a.device.type == "cpu", where
            assert (a.dtype, tuple(a.shape)) == (b.dtype, tuple(b.shape)), where
            if not sample.random:
                np.testing.assert_array_equal(_values(a), _values(b), err_msg=where)


def test_sparse_layouts_are_cpu_only():
    with pytest.raises(NotImplementedError, match="'aten::to_sparse.sparse_dim' with arguments "
                                                   "from the 'Sim' backend"):
        strata.ones(2, 2, device="sim").to_sparse()


def _train(device, steps=4):
    strata.manual_seed(0)
    nn = strata.nn
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    opt = strata.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    x = strata.tensor(rng.standard_normal((32, 12), dtype=np.float32)).to(device)
    y = strata.tensor(rng.integers(0, 4, 32)).to(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def test_mlp_training_with_adam_matches_cpu():
    cpu_losses, cpu_params = _train("cpu")
    sim_losses, sim_params = _train("sim")
    assert sim_losses == cpu_losses
    for a, b in zip(cpu_params, sim_params):
        np.testing.assert_array_equal(a, b)
