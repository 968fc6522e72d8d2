"""The opencl device's runtime: selection, copies, streams and events, the caching allocator,
errors. Skipped where pyopencl finds no OpenCL device."""

import os
import subprocess
import sys

import numpy as np
import pytest

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def test_device_api():
    assert strata.opencl.device_count() >= 1
    assert isinstance(strata.opencl.get_device_name(), str)
    x = strata.ones(3, device="opencl")
    assert str(x.device) == "opencl:0" and x.cpu().tolist() == [1, 1, 1]
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        strata.ones(3, device=f"opencl:{strata.opencl.device_count()}")


def test_device_selection_by_name():
    """STRATA_OPENCL_DEVICE keeps the devices whose platform/device name contains it."""
    code = ("import strata; print(strata.opencl.device_count()); "
            "strata.ones(1, device='opencl')")
    # keep the caller's path: pyopencl may be installed there (a GPU machine's wheels)
    path = os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, STRATA_OPENCL_DEVICE="no such device")
    out = subprocess.run([sys.executable, "-c", code], check=False, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.split()[0] == "0"
    assert "invalid device ordinal 0: 0 OpenCL device(s)" in out.stderr
    name = strata.opencl.get_device_name().split()[0]
    env["STRATA_OPENCL_DEVICE"] = name.upper()
    out = subprocess.run([sys.executable, "-c", code], check=False, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split()[0] != "0", out.stderr


def test_copies_round_trip_with_layouts_and_dtypes():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = strata.tensor(a).to("opencl")
    np.testing.assert_array_equal(x.cpu().numpy(), a)
    np.testing.assert_array_equal(x.t().cpu().numpy(), a.T)             # strided download
    np.testing.assert_array_equal(x.to(strata.int64).cpu().numpy(), a.astype(np.int64))
    y = strata.zeros(6, 4, device="opencl")
    y.copy_(strata.tensor(a).t())                                       # strided upload
    np.testing.assert_array_equal(y.cpu().numpy(), a.T)
    y[1:3].copy_(strata.tensor([7, 8, 9, 10]))                          # broadcast, int->float
    assert y.cpu().numpy()[2].tolist() == [7, 8, 9, 10]
    z = x[:, ::2].to("opencl")                                          # device to device
    np.testing.assert_array_equal(z.cpu().numpy(), a[:, ::2])
    pending = x.to("cpu", non_blocking=True)
    strata.opencl.synchronize()
    np.testing.assert_array_equal(pending.numpy(), a)


def test_empty_tensors():
    x = strata.ones(0, 3, device="opencl")
    assert tuple((x * 2).sum(0).cpu().shape) == (3,)
    assert (x + 1).cpu().numpy().shape == (0, 3)


def test_events_time_device_work():
    x = strata.ones(256, 256, device="opencl")
    start, end = strata.opencl.Event(enable_timing=True), strata.opencl.Event(enable_timing=True)
    assert start.query()                         # never recorded: nothing to wait for
    start.record()
    y = x @ x
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    assert start.elapsed_time(end) > 0
    assert y[0, 0].item() == 256
    untimed = strata.opencl.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        untimed.elapsed_time(end)
    with pytest.raises(RuntimeError, match="must be recorded"):
        strata.opencl.Event(enable_timing=True).elapsed_time(end)


def test_streams_order_work_through_events():
    side = strata.opencl.Stream()
    x = strata.ones(1000, device="opencl")
    side.wait_stream(strata.opencl.current_stream())
    with strata.opencl.stream(side):
        assert strata.opencl.current_stream() == side
        y = x * 3
        done = side.record_event()
    assert strata.opencl.current_stream() == strata.opencl.default_stream()
    strata.opencl.current_stream().wait_event(done)
    assert (y + 1).sum().item() == 4000
    side.synchronize()
    assert side.query()


def test_caching_allocator_reuses_blocks():
    strata.opencl.synchronize()
    base = strata.opencl.memory_allocated()
    x = strata.empty(1000, device="opencl")
    addr = x._storage.addr
    assert strata.opencl.memory_allocated() == base + 4096      # rounded to 512 B blocks
    assert strata.opencl.max_memory_allocated() >= base + 4096 and strata.opencl.is_initialized()
    assert "opencl" in strata.opencl.memory_summary().lower()
    reserved = strata.opencl.memory_reserved()
    del x
    y = strata.empty(1000, device="opencl")
    assert y._storage.addr == addr and strata.opencl.memory_reserved() == reserved
    z = strata.empty(10, device="opencl")                        # carved from the same segment
    assert z._storage.block.segment is y._storage.block.segment
    z.fill_(2.5)
    y.fill_(1.0)                                                 # the offset argument: no overlap
    assert z.sum().item() == 25 and y.sum().item() == 1000


def test_ops_without_a_kernel_name_the_op_and_backend():
    x = strata.ones(3, 3, device="opencl")
    with pytest.raises(NotImplementedError,
                       match="Could not run 'aten::to_sparse.sparse_dim' with arguments from the "
                             "'OpenCL' backend"):
        x.to_sparse()


def test_mixed_devices_raise_before_writing():
    x = strata.ones(3, device="opencl")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x.add_(strata.ones(3))
    assert x.cpu().tolist() == [1, 1, 1]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.add_(strata.ones(2, 3, device="opencl"))
    assert x.cpu().tolist() == [1, 1, 1]


def test_programs_are_built_once_per_structure():
    from strata.backends.opencl import runtime
    rt = runtime.get(0)
    strata.ones(3, device="opencl").exp()
    built = len(rt._programs)
    for n in (5, 17, 100):                         # other sizes: the same program
        strata.ones(n, device="opencl").exp()
    assert len(rt._programs) == built


def test_program_binaries_are_cached_on_disk(tmp_path, monkeypatch):
    from strata import config
    from strata.backends.opencl import runtime
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    rt = runtime.get(0)
    source = f"__kernel void k_twice(__global float* x, const long off) " \
             f"{{ x[off + get_global_id(0)] *= 2; }} /* {tmp_path} */"
    rt.kernel(source, "k_twice")
    assert len(list((tmp_path / "opencl").glob("*.bin"))) == 1
    rt._programs.pop(source)
    rt._kernels.pop((source, "k_twice"))
    loaded = rt.programs_from_disk
    x = strata.ones(4, device="opencl")
    buffer, offset = rt.buffer_of(x)       # where the block starts depends on earlier tests
    rt.launch("test", source, "k_twice", 4, [buffer, np.int64(offset)], [x])
    assert rt.programs_from_disk == loaded + 1
    assert x.cpu().tolist() == [2, 2, 2, 2]


def test_programs_divide_as_ieee_where_the_device_can():
    """Note [Correctly rounded division]: float32 quotients and square roots as PyTorch's."""
    import pyopencl as cl

    from strata.backends.opencl import runtime
    rt = runtime.get(0)
    offered = rt.cl_device.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT
    assert rt.build_options == (["-cl-fp32-correctly-rounded-divide-sqrt"] if offered else [])
    program = rt.program("__kernel void k_div(__global float* x) { x[0] = x[0] / x[1]; }")
    options = program.get_build_info(rt.cl_device, cl.program_build_info.OPTIONS)
    assert all(option in options for option in rt.build_options)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    got = (strata.tensor(a).to("opencl") / strata.tensor(b).to("opencl")).cpu().numpy()
    np.testing.assert_array_equal(got, a / b)
    got = strata.tensor(np.abs(a)).to("opencl").sqrt().cpu().numpy()
    np.testing.assert_array_equal(got, np.sqrt(np.abs(a)))


def test_build_errors_name_the_kernel():
    from strata.backends.opencl import runtime
    with pytest.raises(RuntimeError, match="OpenCL: building kernel 'k_bad' failed"):
        runtime.get(0).kernel("__kernel void k_bad() { undefined_name = 1; }", "k_bad")


def test_profiler_sees_launches_and_device_times(tmp_path):
    x = strata.ones(1000, device="opencl")
    with strata.profiler.profile() as prof:
        y = (x * 2).sum()
        strata.opencl.synchronize()
    events = prof.trace_events()
    launches = [e for e in events if e.layer == "runtime" and e.name == "launch"]
    device = [e for e in events if e.layer == "device"]
    assert {e.fields["op"] for e in launches} >= {"aten::mul.Tensor", "aten::sum.dim_IntList"}
    assert {e.name for e in device} >= {"aten::mul.Tensor", "aten::sum.dim_IntList"}
    assert all(e.end_ns >= e.start_ns for e in device)
    assert y.item() == 2000
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    assert "opencl:0 stream 0" in (tmp_path / "trace.json").read_text()   # the device track


def test_relaunches_set_only_changed_arguments_correctly():
    """One kernel object serves every launch; only changed arguments are set again."""
    a, b = strata.arange(5.0).to("opencl"), strata.arange(7.0).to("opencl")
    results = [(a * 2), (a * 3), (b * 3), (b[2:] * 3), (a * 3)]
    expected = [[0, 2, 4, 6, 8], [0, 3, 6, 9, 12], [0, 3, 6, 9, 12, 15, 18],
                [6, 9, 12, 15, 18], [0, 3, 6, 9, 12]]
    assert [r.cpu().tolist() for r in results] == expected


def test_out_of_memory_is_torchs_error_and_leaves_the_device_usable():
    with pytest.raises(strata.OutOfMemoryError, match="OPENCL out of memory. Tried to allocate"):
        strata.empty(2**42, device="opencl")
    assert strata.ones(3, device="opencl").cpu().tolist() == [1, 1, 1]
