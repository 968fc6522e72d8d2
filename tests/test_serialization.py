"""strata.save / strata.load: round trips, safetensors interop, corruption, interrupted saves and
the weights-only unpickler."""

import copy
import io
import json
import os
import pickle
from collections import Counter, OrderedDict

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch

import strata
from strata import serialization
from strata.serialization._structure import PICKLE_KEY

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def _array(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "bfloat16":
        return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _same(a, b):
    assert isinstance(b, strata.Tensor)
    assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape)
    assert np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True)


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    strata.save(obj, buf)
    buf.seek(0)
    return strata.load(buf, **load_kwargs)


# --- round trips --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (3, 4, 5)])
def test_tensor_round_trip(dtype, shape):
    t = strata.tensor(_array(dtype, shape))
    _same(t, _round_trip(t))
    loaded = _round_trip({"w": t})
    _same(t, loaded["w"])


def test_non_contiguous_and_views():
    base = strata.tensor(_array("float32", (4, 6)))
    views = {"t": base.t(), "step": base[:, ::2], "row": base[1], "scalar": base[2, 3],
             "expanded": strata.tensor([1.0, 2.0]).expand(3, 2)}
    loaded = _round_trip(views)
    for key, v in views.items():
        _same(v, loaded[key])
        assert loaded[key].is_contiguous()


def test_shared_tensor_saved_once_and_stays_shared():
    t = strata.tensor(_array("float32", (3,)))
    obj = {"a": t, "b": [t, {"c": t}], "other": t.clone()}
    buf = io.BytesIO()
    strata.save(obj, buf)
    assert len(safetensors.numpy.load(buf.getvalue())) == 2
    buf.seek(0)
    loaded = strata.load(buf)
    assert loaded["a"] is loaded["b"][0] is loaded["b"][1]["c"]
    assert loaded["other"] is not loaded["a"]


def test_nested_structure_round_trip():
    t = strata.arange(6).reshape(2, 3)
    obj = {
        "list": [1, 2.5, "three", None, True, False, [t]],
        "tuple": (t, (1, (2,))),
        "odict": OrderedDict([("z", 1), ("a", t)]),
        "counter": Counter([1, 1, 5]),
        "int_keys": {0: {"step": strata.tensor(3.0)}, 1: {}},
        "tuple_key": {(1, "x"): 2, 2.5: "float key", None: 0},
        "floats": [float("inf"), -float("inf"), 1e-300, -0.0],
        "dtype": strata.bfloat16, "device": strata.device("cpu"), "size": strata.Size([2, 3]),
        "big": 2 ** 80, "unicode": "naïve — ✓",
        "np": np.arange(4, dtype=np.float32), "np_scalar": np.float64(0.25),
    }
    loaded = _round_trip(obj)
    assert loaded["list"][:6] == [1, 2.5, "three", None, True, False]
    assert type(loaded["list"][4]) is bool and type(loaded["list"][0]) is int
    _same(t, loaded["list"][6][0])
    assert isinstance(loaded["tuple"], tuple) and loaded["tuple"][1] == (1, (2,))
    assert type(loaded["odict"]) is OrderedDict and list(loaded["odict"]) == ["z", "a"]
    assert loaded["counter"] == Counter({1: 2, 5: 1}) and type(loaded["counter"]) is Counter
    assert list(loaded["int_keys"]) == [0, 1]
    assert loaded["int_keys"][0]["step"].item() == 3.0
    assert loaded["tuple_key"] == {(1, "x"): 2, 2.5: "float key", None: 0}
    assert loaded["floats"][:2] == [float("inf"), -float("inf")]
    assert loaded["floats"][2] == 1e-300 and str(loaded["floats"][3]) == "-0.0"
    assert loaded["dtype"] is strata.bfloat16 and loaded["device"] == strata.device("cpu")
    assert loaded["size"] == strata.Size([2, 3]) and isinstance(loaded["size"], strata.Size)
    assert loaded["big"] == 2 ** 80 and loaded["unicode"] == "naïve — ✓"
    assert isinstance(loaded["np"], np.ndarray) and np.array_equal(loaded["np"], np.arange(4))
    assert loaded["np_scalar"] == 0.25 and isinstance(loaded["np_scalar"], np.float64)
    nan = _round_trip([float("nan")])
    assert np.isnan(nan[0])


def test_requires_grad_and_parameters_survive():
    w = strata.nn.Parameter(strata.ones(2, 2))
    frozen = strata.nn.Parameter(strata.ones(2), requires_grad=False)
    leaf = strata.zeros(3).requires_grad_()
    loaded = _round_trip({"w": w, "frozen": frozen, "leaf": leaf, "plain": strata.ones(1)})
    assert isinstance(loaded["w"], strata.nn.Parameter) and loaded["w"].requires_grad
    assert isinstance(loaded["frozen"], strata.nn.Parameter)
    assert not loaded["frozen"].requires_grad
    assert loaded["leaf"].requires_grad and not isinstance(loaded["leaf"], strata.nn.Parameter)
    assert not loaded["plain"].requires_grad


def test_loaded_tensors_are_writable_and_independent():
    t = strata.ones(3)
    loaded = _round_trip({"t": t})["t"]
    loaded.add_(1)
    assert loaded.tolist() == [2.0, 2.0, 2.0] and t.tolist() == [1.0, 1.0, 1.0]


def test_paths_and_file_objects(tmp_path):
    t = strata.tensor(_array("float32", (2, 3)))
    for target in (str(tmp_path / "a.safetensors"), tmp_path / "b.pt"):
        strata.save({"t": t}, target)
        _same(t, strata.load(target)["t"])
    with open(tmp_path / "c.bin", "wb") as f:
        strata.save([t], f)
    with open(tmp_path / "c.bin", "rb") as f:
        _same(t, strata.load(f)[0])


def test_module_state_dict_round_trip_keeps_metadata():
    model = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.ReLU(), strata.nn.Linear(4, 2))
    sd = model.state_dict()
    loaded = _round_trip(sd)
    assert type(loaded) is type(sd) and list(loaded) == list(sd)
    assert getattr(loaded, "_metadata", None) == getattr(sd, "_metadata", None)
    for key in sd:
        _same(sd[key], loaded[key])
    fresh = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.ReLU(), strata.nn.Linear(4, 2))
    fresh.load_state_dict(loaded)
    for a, b in zip(model.parameters(), fresh.parameters()):
        _same(a, b)


def test_optimizer_state_dict_round_trip():
    params = [strata.nn.Parameter(strata.ones(3)), strata.nn.Parameter(strata.ones(2, 2))]
    opt = strata.optim.Adam(params, lr=0.01, amsgrad=True)
    for p in params:
        p.grad = strata.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    loaded = _round_trip(sd)
    assert loaded["param_groups"] == sd["param_groups"]
    assert list(loaded["state"]) == [0, 1]
    for pid, state in sd["state"].items():
        for key, value in state.items():
            _same(value, loaded["state"][pid][key])
    opt2 = strata.optim.Adam([strata.nn.Parameter(p.detach().clone()) for p in params])
    opt2.load_state_dict(loaded)
    assert opt2.param_groups[0]["amsgrad"] is True


def test_lr_scheduler_state_dict_round_trip():
    opt = strata.optim.SGD([strata.nn.Parameter(strata.ones(1))], lr=0.1)
    sched = strata.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    loaded = _round_trip(sched.state_dict())
    assert loaded == sched.state_dict()
    assert type(loaded["milestones"]) is Counter


# --- whole objects (pickle mode) ----------------------------------------------------------------

class _Custom:
    def __init__(self, weight):
        self.weight = weight
        self.name = "custom"


def test_whole_module_needs_safe_globals():
    model = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.Tanh(),
                                 strata.nn.Linear(4, 1))
    buf = io.BytesIO()
    strata.save(model, buf)
    # As torch.load refuses torch.nn.Linear: a Module runs code when it is built.
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL strata.nn."
                                                     "modules.container.Sequential"):
        strata.load(io.BytesIO(buf.getvalue()))
    with serialization.safe_globals([strata.nn.Sequential, strata.nn.Linear, strata.nn.Tanh]):
        loaded = strata.load(io.BytesIO(buf.getvalue()))
    assert type(loaded) is strata.nn.Sequential and repr(loaded) == repr(model)
    for (n1, p1), (n2, p2) in zip(model.named_parameters(), loaded.named_parameters()):
        assert n1 == n2 and isinstance(p2, strata.nn.Parameter)
        _same(p1, p2)
    x = strata.ones(2, 3)
    _same(model(x), loaded(x))


def test_custom_class_refused_then_allowed():
    obj = _Custom(strata.ones(2))
    buf = io.BytesIO()
    strata.save(obj, buf)
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*Unsupported "
                                                     "global: GLOBAL .*_Custom"):
        strata.load(io.BytesIO(buf.getvalue()))
    with serialization.safe_globals([_Custom]):
        loaded = strata.load(io.BytesIO(buf.getvalue()))
    assert isinstance(loaded, _Custom) and loaded.name == "custom"
    _same(obj.weight, loaded.weight)
    assert _Custom not in serialization.get_safe_globals()
    serialization.add_safe_globals([_Custom])
    try:
        assert isinstance(strata.load(io.BytesIO(buf.getvalue())), _Custom)
    finally:
        serialization.clear_safe_globals()
    loaded = strata.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert isinstance(loaded, _Custom)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    strata.save({"weights": strata.ones(2), "payload": _Evil(marker)}, path)
    with pytest.raises(pickle.UnpicklingError) as info:
        strata.load(path)
    assert "Weights only load failed" in str(info.value)
    assert f"Unsupported global: GLOBAL {os.system.__module__}.system" in str(info.value)
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError):
        strata.load(path, weights_only=None)
    assert not marker.exists()
    # Refusing is final: there is no fallback to a full unpickler.
    with pytest.raises(pickle.UnpicklingError):
        strata.load(path, map_location="cpu")
    assert not marker.exists()


def _file_with_pickle(payload):
    """A strata checkpoint (valid checksum) whose pickle is ``payload``: what an attacker can
    hand-craft."""
    arrays = {PICKLE_KEY: np.frombuffer(payload, dtype=np.uint8)}
    metadata = {"strata.kind": "pickle", "strata.crc32": serialization._checksum(
        "pickle", "", arrays)}
    return io.BytesIO(bytes(safetensors.numpy.save(arrays, metadata=metadata)))


@pytest.mark.parametrize("module,name", [
    ("builtins", "eval"), ("posix", "system"), ("strata.serialization", "load"),
    ("strata.nn.modules.module", "OrderedDict"),      # imported by strata.nn, not defined there
    ("strata.nn.modules.module", "warnings"), ("strata.nn.modules.module", "no_grad"),
    ("copyreg", "_reconstructor"), ("strata._tensor", "Tensor"),
])
def test_hand_crafted_globals_refused(module, name):
    payload = b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"q\x00)R."
    with pytest.raises(pickle.UnpicklingError, match=f"Unsupported global: GLOBAL {module}."
                                                     f"{name}"):
        strata.load(_file_with_pickle(payload))


def test_bad_persistent_id_refused():
    payload = b"\x80\x02X\x04\x00\x00\x00evilQ."     # BINPERSID with a string id
    with pytest.raises(pickle.UnpicklingError, match="unsupported persistent id"):
        strata.load(_file_with_pickle(payload))


def test_weights_only_false_is_an_explicit_opt_in(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    strata.save(_Evil(marker), path)
    strata.load(path, weights_only=False)
    assert marker.exists()


def test_explicit_pickle_module_requires_weights_only_false():
    buf = io.BytesIO()
    strata.save({"a": strata.ones(1)}, buf)
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        strata.load(io.BytesIO(buf.getvalue()), pickle_module=pickle)


def test_tensor_pickles_by_value():
    t = strata.tensor(_array("bfloat16", (2, 3)))
    _same(t, pickle.loads(pickle.dumps(t)))
    g = strata.ones(2).requires_grad_()
    assert pickle.loads(pickle.dumps(g)).requires_grad
    p = strata.nn.Parameter(strata.ones(3))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, strata.nn.Parameter)
    _same(p, q)
    _same(t, copy.deepcopy(t))
    view = strata.arange(10)[::3]
    _same(view, pickle.loads(pickle.dumps(view)))


# --- map_location ---------------------------------------------------------------------------------

@pytest.mark.parametrize("map_location", ["cpu", strata.device("cpu"), {"cpu": "cpu"}, None])
def test_map_location_cpu(map_location):
    loaded = _round_trip({"t": strata.ones(2)}, map_location=map_location)
    assert loaded["t"].device == strata.device("cpu")


def test_map_location_meta_and_callable():
    loaded = _round_trip({"t": strata.ones(2, 3)}, map_location="meta")
    assert loaded["t"].device.type == "meta" and tuple(loaded["t"].shape) == (2, 3)
    loaded = _round_trip({"t": strata.ones(2)}, map_location={"cpu": "meta"})
    assert loaded["t"].device.type == "meta"
    seen = []
    loaded = _round_trip({"t": strata.ones(2)},
                         map_location=lambda storage, loc: seen.append(loc) or storage)
    assert seen == ["cpu"] and loaded["t"].device.type == "cpu"


def test_cannot_save_meta_tensor():
    with pytest.raises(RuntimeError, match="cannot save a tensor on the 'meta' device"):
        strata.save({"t": strata.empty(2, device="meta")}, io.BytesIO())


# --- interop with safetensors --------------------------------------------------------------------

def test_loads_files_written_by_safetensors_torch(tmp_path):
    path = tmp_path / "torch.safetensors"
    tensors = {"w": torch.randn(3, 4), "b": torch.randn(4).bfloat16(),
               "i": torch.arange(5), "m": torch.tensor([True, False])}
    safetensors.torch.save_file(tensors, path)
    loaded = strata.load(path)
    assert sorted(loaded) == sorted(tensors)
    for key, t in tensors.items():
        s = loaded[key]
        assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert np.array_equal(s.float().numpy() if key == "b" else s.numpy(),
                              t.float().numpy() if key == "b" else t.numpy())


def test_flat_state_dict_readable_by_safetensors_torch(tmp_path):
    path = tmp_path / "strata.safetensors"
    sd = OrderedDict([("layer.weight", strata.tensor(_array("float32", (3, 2)))),
                      ("layer.bias", strata.tensor(_array("bfloat16", (3,)))),
                      ("steps", strata.tensor(_array("int64", (2,))))])
    strata.save(sd, path)
    loaded = safetensors.torch.load_file(path)
    assert sorted(loaded) == sorted(sd)
    for key, s in sd.items():
        t = loaded[key]
        assert str(t.dtype).split(".")[-1] == str(s.dtype).split(".")[-1]
        assert np.array_equal(t.float().numpy(), s.float().numpy())


# --- corruption ---------------------------------------------------------------------------------

def _saved_bytes(obj=None):
    buf = io.BytesIO()
    strata.save(obj if obj is not None else
                {"w": strata.tensor(_array("float32", (16, 8))), "n": 3, "name": "x"}, buf)
    return buf.getvalue()


def _load_bytes(tmp_path, data):
    path = tmp_path / "ckpt.safetensors"
    path.write_bytes(data)
    return strata.load(path)


def test_truncated_file_raises_clear_error(tmp_path):
    data = _saved_bytes()
    for cut in [0, 3, 8, 20, len(data) // 2, len(data) - 1]:
        with pytest.raises(RuntimeError, match=r"ckpt\.safetensors.*(truncated or corrupted)"):
            _load_bytes(tmp_path, data[:cut])


def test_flipped_bytes_are_detected(tmp_path):
    data = _saved_bytes()
    header_len = int.from_bytes(data[:8], "little")
    rng = np.random.default_rng(0)
    positions = list(range(8 + header_len, len(data), 37))            # tensor data
    positions += list(rng.integers(8, 8 + header_len, 40))          # header bytes
    for pos in positions:
        corrupted = bytearray(data)
        corrupted[pos] ^= 0x10
        try:
            loaded = _load_bytes(tmp_path, bytes(corrupted))
        except RuntimeError as e:
            assert "ckpt.safetensors" in str(e)
            continue
        # A flip the format cannot see (JSON whitespace, say) must leave the content intact.
        original = _load_bytes(tmp_path, data)
        assert loaded.keys() == original.keys() and loaded["n"] == original["n"]
        _same(original["w"], loaded["w"])


def test_bad_headers(tmp_path):
    good = _saved_bytes()
    header_len = int.from_bytes(good[:8], "little")
    huge = (10 ** 12).to_bytes(8, "little") + good[8:]
    with pytest.raises(RuntimeError, match="header claims"):
        _load_bytes(tmp_path, huge)
    garbage = (10).to_bytes(8, "little") + b"not json!!" + good[8 + header_len:]
    with pytest.raises(RuntimeError, match="not valid JSON"):
        _load_bytes(tmp_path, garbage)
    header = b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' \
             b'"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    dup = len(header).to_bytes(8, "little") + header + b"\0" * 4
    with pytest.raises(RuntimeError, match="duplicate key"):
        _load_bytes(tmp_path, dup)
    with pytest.raises(RuntimeError, match="a broken zip archive"):
        buf = io.BytesIO()
        torch.save({"a": torch.ones(1)}, buf)
        _load_bytes(tmp_path, buf.getvalue()[:-30])


def test_tampered_structure_fails_checksum(tmp_path):
    data = _saved_bytes({"lr": 0.1, "w": strata.ones(2)})
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_len])
    header["__metadata__"]["strata.structure"] = header["__metadata__"][
        "strata.structure"].replace("0.1", "0.9")
    body = json.dumps(header).encode()
    body += b" " * (-len(body) % 8)
    with pytest.raises(RuntimeError, match="checksum"):
        _load_bytes(tmp_path, len(body).to_bytes(8, "little") + body + data[8 + header_len:])


# --- atomic save --------------------------------------------------------------------------------

@pytest.mark.parametrize("exc", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_interrupted_save_keeps_previous_checkpoint(tmp_path, monkeypatch, exc):
    path = tmp_path / "ckpt.safetensors"
    strata.save({"w": strata.ones(4)}, path)
    before = path.read_bytes()
    real = serialization._safetensors.write

    def half_then_fail(f, arrays, metadata):
        real(f, arrays, metadata)
        f.truncate(f.tell() // 2)
        raise exc

    monkeypatch.setattr(serialization._safetensors, "write", half_then_fail)
    with pytest.raises(type(exc)):
        strata.save({"w": strata.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]       # no temp file left behind
    assert strata.load(path)["w"].tolist() == [1.0] * 4


def test_save_replaces_atomically(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    strata.save({"w": strata.ones(2)}, path)
    strata.save({"w": strata.zeros(3)}, path)
    assert strata.load(path)["w"].tolist() == [0.0, 0.0, 0.0]
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
