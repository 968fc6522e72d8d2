"""Every aten op, run on its samples: against PyTorch, non-contiguous, and on the meta device."""

import numpy as np
import pytest
import strata
from helpers import check, check_meta, to_strata, to_torch
from op_samples import all_samples
from strata.ops.op import REGISTRY

SAMPLES = all_samples()
CASES = [pytest.param(q, i, s, id=f"{q.split('::')[1]}-{s.name or i}")
         for q, samples in SAMPLES.items() for i, s in enumerate(samples)]


@pytest.mark.parametrize("qualname,i,sample", CASES)
def test_matches_torch(qualname, i, sample):
    if sample.random:
        import torch
        s = sample.fn(strata, *(to_strata(x) for x in sample.inputs))
        t = sample.fn(torch, *(to_torch(x) for x in sample.inputs))
        s, t = (s if isinstance(s, tuple) else (s,)), (t if isinstance(t, tuple) else (t,))
        for a, b in zip(s, t):
            assert tuple(a.shape) == tuple(b.shape)
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        return
    check(sample.fn, *sample.inputs, atol=sample.atol, rtol=sample.rtol,
          check_stride=sample.check_stride)


@pytest.mark.parametrize("qualname,i,sample",
                         [c for c in CASES if c.values[2].noncontiguous and not c.values[2].random])
def test_noncontiguous(qualname, i, sample):
    if not any(isinstance(x, np.ndarray) and x.ndim > 0 for x in sample.inputs):
        pytest.skip("no array input to lay out differently")
    check(sample.fn, *sample.inputs, atol=sample.atol, rtol=sample.rtol, noncontiguous=True)


@pytest.mark.parametrize("qualname,i,sample", [c for c in CASES if c.values[2].meta])
def test_meta_matches_real(qualname, i, sample):
    check_meta(sample.fn, *sample.inputs)


def test_every_aten_op_has_samples():
    ops = [q for q in REGISTRY if q.startswith("aten::")]
    missing = sorted(q for q in ops if q not in SAMPLES)
    assert not missing, f"aten ops without samples in tests/op_samples/: {missing}"
