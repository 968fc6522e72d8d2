"""Corners an audit of issue 11 (§2-§4) found by running what a new user would write, each
against PyTorch: the error ``addmm_`` raises for a product of another shape, ..."""

import numpy as np
import pytest
import torch

import strata


@pytest.mark.parametrize("self_shape, mat1_shape, mat2_shape", [
    ((2, 2), (3, 3), (3, 3)),     # the product is larger than self: PyTorch's in-place check
    ((2, 2), (2, 3), (3, 3)),     # broadcastable neither way
    ((2,), (2, 2), (2, 2)),       # self would broadcast, but in place it must match
    ((2, 2), (2, 2), (3, 3)),     # the product itself is refused first
])
def test_addmm_inplace_shape_error_and_untouched_self(self_shape, mat1_shape, mat2_shape):
    errors = []
    for m in (strata, torch):
        out = m.ones(self_shape)
        with pytest.raises(RuntimeError) as err:
            out.addmm_(m.ones(mat1_shape), m.ones(mat2_shape))
        assert out.tolist() == np.ones(self_shape).tolist()
        errors.append(str(err.value))
    assert errors[0] == errors[1]


def test_addmm_inplace_values_and_gradient():
    outs = []
    for m in (strata, torch):
        a = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        out = m.ones(2, 2, requires_grad=True).clone()
        out.addmm_(a, m.full((2, 2), 3.), beta=0.5, alpha=2)
        out.sum().backward()
        outs.append((out.tolist(), a.grad.tolist()))
    assert outs[0] == outs[1]


SCALAR_WARNING_PROGRAM = """
import sys, warnings
warnings.simplefilter("always")
torch = __import__(sys.argv[1])
w = torch.ones(1, requires_grad=True)
loss = (w * 2).sum()
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    loss.item(); int(loss); bool(loss)          # no warning from these
    with torch.no_grad():
        float(loss)                             # none under no_grad
    float(loss); float(loss)                    # once per process
    float(torch.ones(1))
print([str(x.message).split(" (Triggered")[0] for x in seen], [x.category.__name__ for x in seen])
"""


def test_float_of_a_tensor_that_requires_grad_warns_once_as_torch():
    import subprocess
    import sys
    outs = [subprocess.run([sys.executable, "-c", SCALAR_WARNING_PROGRAM, name],
                           capture_output=True, text=True, timeout=120,
                           check=True).stdout for name in ("strata", "torch")]
    assert outs[0] == outs[1]
    assert "requires_grad=True" in outs[0]


def _warnings_of(fn):
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message)) for w in seen]


@pytest.mark.parametrize("program", [
    lambda m: m.autocast("cuda").__enter__(),
    lambda m: m.cuda.amp.autocast().__enter__(),
    lambda m: m.cuda.amp.GradScaler(),
    lambda m: m.amp.GradScaler("cuda"),
])
def test_cuda_amp_on_a_machine_without_cuda_warns_as_torch(program):
    """A CUDA training script run on the CPU: the same warnings, deprecations included."""
    assert _warnings_of(lambda: program(strata)) == _warnings_of(lambda: program(torch))


@pytest.mark.parametrize("call", [
    lambda m: m.maximum(m.arange(3.), np.ones(3)),
    lambda m: m.minimum(np.ones(3), m.arange(3.)),
    lambda m: m.add(m.arange(3.), np.ones(3)),
    lambda m: m.mul(m.arange(3.), "2"),
    lambda m: m.add(m.arange(2.), [1, 2]),
    lambda m: m.atan2(m.arange(3.), other=np.ones(3)),
    lambda m: m.matmul(m.ones(2, 2), np.eye(2)),
])
def test_function_with_a_non_tensor_operand_raises_torchs_parser_error(call):
    """Functions refuse NumPy arrays, strings and lists where a Tensor goes (only the operators
    defer to NumPy), with PyTorch's ``f(): argument 'x' (position n) must be Tensor`` words."""
    errors = []
    for m in (strata, torch):
        with pytest.raises(TypeError) as err:
            call(m)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("call", [
    lambda m: m.arange(3.).maximum(np.ones(3)),
    lambda m: m.ones(2, 2).matmul(np.eye(2)),
    lambda m: m.ones(2).add(np.ones(2)),
    lambda m: m.ones(2).mul(other="x"),
])
def test_method_with_a_non_tensor_operand_raises_torchs_parser_error(call):
    """The same for methods, whose positions count after ``self``."""
    errors = []
    for m in (strata, torch):
        with pytest.raises(TypeError) as err:
            call(m)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


INTEROP_PROGRAM = """
import sys
torch = __import__(sys.argv[1])
out = [torch.get_num_interop_threads() >= 1]
for bad in (0, -1, 1.5, True):
    try:
        torch.set_num_interop_threads(bad)
    except RuntimeError as e:
        out.append(str(e))
torch.set_num_interop_threads(1)
out.append(torch.get_num_interop_threads())
try:
    torch.set_num_interop_threads(2)
except RuntimeError as e:
    out.append(str(e))
out.append(torch.get_num_interop_threads())
print(out)
"""


def test_interop_threads_set_once_as_torch():
    import subprocess
    import sys
    outs = [subprocess.run([sys.executable, "-c", INTEROP_PROGRAM, name], capture_output=True,
                           text=True, timeout=120, check=True).stdout
            for name in ("strata", "torch")]
    assert outs[0] == outs[1]


def test_pth_tar_checkpoint_is_read_by_torch_load(tmp_path):
    """``checkpoint.pth.tar`` (PyTorch's ImageNet example) is PyTorch's zip format, so
    ``torch.load`` reads it (a safetensors file there made torch say "Weights only load
    failed")."""
    model = strata.nn.Linear(2, 1)
    path = tmp_path / "checkpoint.pth.tar"
    strata.save({"epoch": 3, "state_dict": model.state_dict()}, path)
    loaded = torch.load(path)
    assert loaded["epoch"] == 3
    assert loaded["state_dict"]["weight"].tolist() == model.weight.tolist()
    assert strata.load(path)["state_dict"]["bias"].tolist() == model.bias.tolist()
