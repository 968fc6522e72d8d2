"""Pinned host memory on opencl: ``pin_memory("opencl")`` and non-blocking copies through
pinned staging. Skipped where pyopencl finds no OpenCL device."""

import numpy as np
import pytest
import torch

import strata
from strata.backends.opencl import pinned
from strata.backends.opencl import runtime as R

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def test_pin_memory_copies_into_mapped_pinned_memory():
    x = strata.randn(300, 7)
    p = x.pin_memory("opencl")
    assert p.is_pinned() and not x.is_pinned() and p.device.type == "cpu"
    assert pinned.is_pinned_by(R.get(0), p) and not pinned.is_pinned_by(R.get(0), x)
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    assert p.pin_memory("opencl") is p


def test_non_blocking_round_trip_through_pinned_memory():
    host = strata.arange(12, dtype=strata.float32).reshape(3, 4).pin_memory("opencl")
    on_device = host.to("opencl", non_blocking=True)
    back = strata.empty(3, 4).pin_memory("opencl")
    back.copy_(on_device * 2, non_blocking=True)
    strata.opencl.synchronize()
    np.testing.assert_array_equal(back.numpy(), torch.arange(12.).reshape(3, 4).numpy() * 2)


def test_non_blocking_upload_from_pageable_memory_is_staged():
    x = strata.randn(64, 64)
    want = x.numpy().copy()
    rt = R.get(0)
    on_device = x.to("opencl", non_blocking=True)
    x.add_(1.0)                   # after the call returned: must not change what arrives
    assert rt.host_allocator.memory_stats()["allocation.all.allocated"] >= 1
    np.testing.assert_array_equal(on_device.cpu().numpy(), want)


def test_pinning_a_device_tensor_raises():
    x = strata.ones(3, device="opencl")
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        x.pin_memory("opencl")
