"""Checkpoints across frameworks (issue 11): real PyTorch writes, strata reads, and the reverse,
both with weights-only loading."""

import io
import pickle
from collections import Counter, OrderedDict

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool"]


def _np_dtype(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _as_numpy(t):
    """Elements of a strata or torch tensor, bfloat16 kept exact."""
    if isinstance(t, torch.Tensor):
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()
    return t.numpy()


def _same(a, b):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(_as_numpy(a), _as_numpy(b))


@st.composite
def _arrays(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = np.asarray(rng.standard_normal(shape) * 50)
    return values.astype(_np_dtype(dtype)), draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(items=st.lists(_arrays(), min_size=1, max_size=4))
def test_strata_pt_reads_in_torch(tmp_path_factory, items):
    path = tmp_path_factory.mktemp("s2t") / "ckpt.pt"
    tensors = {}
    for i, (array, transpose) in enumerate(items):
        t = strata.tensor(array)
        tensors[f"t{i}"] = t.t() if transpose and t.dim() == 2 else t
    strata.save(tensors, path)
    loaded = torch.load(path)                      # weights_only=True, PyTorch's default
    assert list(loaded) == list(tensors)
    for key, t in tensors.items():
        _same(t, loaded[key])


@settings(max_examples=40, deadline=None)
@given(items=st.lists(_arrays(), min_size=1, max_size=4), legacy=st.booleans())
def test_torch_pt_reads_in_strata(tmp_path_factory, items, legacy):
    path = tmp_path_factory.mktemp("t2s") / "ckpt.pt"
    tensors = {}
    for i, (array, transpose) in enumerate(items):
        t = torch.from_numpy(array.view(np.int16)).view(torch.bfloat16) \
            if array.dtype == ml_dtypes.bfloat16 else torch.from_numpy(array)
        tensors[f"t{i}"] = t.t() if transpose and t.dim() == 2 else t
    torch.save(tensors, path, _use_new_zipfile_serialization=not legacy)
    loaded = strata.load(path)
    assert list(loaded) == list(tensors)
    for key, t in tensors.items():
        _same(loaded[key], t)


def _torch_training_checkpoint():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 3)).sum().backward()
    opt.step()
    return model, opt, {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
                        "best": 0.25, "tag": "run-1", "milestones": Counter({2: 1, 4: 1})}


@pytest.mark.parametrize("legacy", [False, True])
def test_nested_torch_checkpoint_resumes_in_strata(tmp_path, legacy):
    model, _, ckpt = _torch_training_checkpoint()
    torch.save(ckpt, tmp_path / "ckpt.pt", _use_new_zipfile_serialization=not legacy)
    loaded = strata.load(tmp_path / "ckpt.pt")
    assert loaded["epoch"] == 3 and loaded["best"] == 0.25 and loaded["tag"] == "run-1"
    assert loaded["milestones"] == Counter({2: 1, 4: 1})
    assert type(loaded["model"]) is OrderedDict
    assert loaded["model"]._metadata == ckpt["model"]._metadata
    ours = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.ReLU(), strata.nn.Linear(4, 2))
    ours.load_state_dict(loaded["model"])
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(strata.tensor(x)).detach().numpy(),
                               model(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    our_opt = strata.optim.Adam(ours.parameters(), lr=0.5)
    our_opt.load_state_dict(loaded["optimizer"])
    assert our_opt.param_groups[0]["lr"] == 0.01
    for pid, state in ckpt["optimizer"]["state"].items():
        for key, value in state.items():
            _same(loaded["optimizer"]["state"][pid][key], value)


def test_nested_strata_checkpoint_resumes_in_torch(tmp_path):
    model = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.ReLU(), strata.nn.Linear(4, 2))
    opt = strata.optim.Adam(model.parameters(), lr=0.01)
    model(strata.ones(5, 3)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
            "dtype": strata.float16, "device": strata.device("cpu"), "size": strata.Size([2, 3]),
            "param": strata.nn.Parameter(strata.ones(2))}
    strata.save(ckpt, tmp_path / "ckpt.pth")
    loaded = torch.load(tmp_path / "ckpt.pth")
    assert loaded["epoch"] == 3 and loaded["dtype"] is torch.float16
    assert loaded["device"] == torch.device("cpu") and loaded["size"] == torch.Size([2, 3])
    assert isinstance(loaded["param"], torch.nn.Parameter) and loaded["param"].requires_grad
    assert loaded["model"]._metadata == model.state_dict()._metadata
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    theirs.load_state_dict(loaded["model"])
    np.testing.assert_allclose(theirs(torch.ones(2, 3)).detach().numpy(),
                               model(strata.ones(2, 3)).detach().numpy(), rtol=1e-6)
    their_opt = torch.optim.Adam(theirs.parameters())
    their_opt.load_state_dict(loaded["optimizer"])
    assert their_opt.param_groups[0]["lr"] == 0.01
    # mmap=True needs 64-byte aligned records, as torch.save writes them.
    mapped = torch.load(tmp_path / "ckpt.pth", mmap=True)
    _same(mapped["model"]["0.weight"], loaded["model"]["0.weight"])


@pytest.mark.parametrize("legacy", [False, True])
def test_shared_and_strided_storages_from_torch(tmp_path, legacy):
    base = torch.arange(12.0)
    ckpt = {"base": base, "view": base[2:10:3], "grid": base.view(3, 4).t(), "again": base}
    torch.save(ckpt, tmp_path / "views.pt", _use_new_zipfile_serialization=not legacy)
    loaded = strata.load(tmp_path / "views.pt")
    for key, value in ckpt.items():
        _same(loaded[key], value)
    assert loaded["again"] is loaded["base"]


def test_shared_tensor_saved_once(tmp_path):
    t = strata.arange(4.0)
    strata.save({"a": t, "b": t}, tmp_path / "shared.pt")
    loaded = torch.load(tmp_path / "shared.pt")
    assert loaded["a"].untyped_storage().data_ptr() == loaded["b"].untyped_storage().data_ptr()


@pytest.mark.parametrize("legacy", [False, True])
def test_torch_whole_module_refused_by_default(tmp_path, legacy):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "module.pt",
               _use_new_zipfile_serialization=not legacy)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL "
                                                     "torch.nn.modules.linear.Linear"):
        strata.load(tmp_path / "module.pt")


@pytest.mark.parametrize("name,is_zip", [("a.pt", True), ("a.pth", True), ("a.pt.tar", True),
                                         ("a.safetensors", False), ("a.bin", False),
                                         ("a.ckpt", False)])
def test_format_chosen_by_extension(tmp_path, name, is_zip):
    strata.save({"w": strata.ones(2)}, tmp_path / name)
    assert ((tmp_path / name).read_bytes()[:4] == b"PK\x03\x04") is is_zip
    assert strata.load(tmp_path / name)["w"].tolist() == [1.0, 1.0]


def test_objects_torch_cannot_read_fall_back_to_safetensors(tmp_path):
    path = tmp_path / "model.pt"
    strata.save({"w": strata.ones(2), "extra": np.float32(1.5)}, path)   # a NumPy scalar
    assert path.read_bytes()[:4] != b"PK\x03\x04"
    loaded = strata.load(path)
    assert loaded["extra"] == np.float32(1.5) and loaded["w"].tolist() == [1.0, 1.0]


def test_file_object_round_trip_uses_safetensors():
    buf = io.BytesIO()
    strata.save({"w": strata.ones(2)}, buf)
    assert buf.getvalue()[:4] != b"PK\x03\x04"
    buf.seek(0)
    assert strata.load(buf)["w"].tolist() == [1.0, 1.0]


def test_truncated_legacy_file_is_a_clean_error(tmp_path):
    torch.save({"w": torch.arange(100.0)}, tmp_path / "old.pt",
               _use_new_zipfile_serialization=False)
    data = (tmp_path / "old.pt").read_bytes()
    for cut in range(20, len(data), 37):
        with pytest.raises(RuntimeError, match="not a valid checkpoint"):
            strata.load(io.BytesIO(data[:cut]))
