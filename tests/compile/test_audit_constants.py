"""Tensors a compiled program makes from Python data (``torch.tensor([...])`` inside the
function) become graph constants, as PyTorch's lifted constants: no fallback to eager, the same
values and gradients as PyTorch (an audit of issue 9 found both failing; torch eager is the
reference, as torch.compile gives its values)."""

import warnings

import pytest
import torch

import strata


def _program(m):
    def f(x):
        c = m.tensor([1., 2., 3.])
        scale = m.tensor(100, dtype=m.int8)             # a 0-d constant read twice
        return x * c + c.sum(), m.arange(3, dtype=m.int8) + scale, scale * 1
    return f


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_tensor_made_inside_a_compiled_function(backend):
    results = []
    for m in (strata, torch):
        x = m.tensor([0.5, -1., 2.], requires_grad=True)
        fn = _program(m)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)   # strata warns when it falls back
            out = strata.compile(fn, backend=backend, fullgraph=True)(x) if m is strata else fn(x)
        out[0].sum().backward()
        results.append(([t.tolist() for t in out], [str(t.dtype).split(".")[1] for t in out],
                        x.grad.tolist()))
    assert results[0] == results[1]
