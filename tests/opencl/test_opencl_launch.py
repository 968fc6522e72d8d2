"""The opencl launch path (backends/opencl/driver.py): direct libOpenCL calls, only changed
arguments set, no event per kernel, markers where completion must be known. Skipped where
pyopencl finds no OpenCL device."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def _runtime():
    from strata.backends.opencl import runtime
    return runtime.get(0)


@pytest.fixture
def set_arg_calls(monkeypatch):
    """The (kernel handle, index) of every clSetKernelArg call."""
    calls = []
    driver = _runtime().driver
    real = driver.set_arg

    def counted(handle, index, size, value):
        calls.append((handle.value, index))
        return real(handle, index, size, value)
    monkeypatch.setattr(driver, "set_arg", counted)
    return calls


def test_a_repeated_launch_sets_no_argument(set_arg_calls):
    x, y = strata.ones(4, device="opencl"), strata.ones(4, device="opencl")
    out = strata.empty(4, device="opencl")
    strata.add(x, y, out=out)               # the general launch
    strata.add(x, y, out=out)               # the pointwise lane's prepared launch, primed
    set_arg_calls.clear()
    strata.add(x, y, out=out)               # same buffers, offsets, sizes and alpha
    assert set_arg_calls == []
    strata.add(x, y, alpha=2, out=out)      # only the scalar changed
    assert len(set_arg_calls) == 1
    assert out.cpu().tolist() == [3, 3, 3, 3]


def test_a_new_buffer_is_set_even_where_its_handle_repeats(set_arg_calls):
    """Buffers compare by identity: a new cl.Buffer may reuse a released one's handle."""
    import pyopencl as cl
    rt = _runtime()
    source = "__kernel void k_set_one(__global float* x, const long off) { x[off] = 1.0f; }"
    for _ in range(3):
        buffer = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 4)
        set_arg_calls.clear()
        rt.launch("test", source, "k_set_one", 1, [buffer, 0])
        assert (rt.kernel(source, "k_set_one").handle.value, 0) in set_arg_calls
        host = np.zeros(1, np.float32)
        cl.enqueue_copy(rt.current_stream().queue, host, buffer)
        assert host[0] == 1.0
        buffer.release()


def test_kernels_are_enqueued_without_events():
    stream = strata.opencl.current_stream()
    strata.opencl.synchronize()
    seq = stream.seq
    x = strata.ones(8, device="opencl")
    for _ in range(5):
        x = x + 1
    assert stream.seq > seq + 5 - 1 and not stream._pending
    assert x.cpu().tolist() == [6] * 8


def test_completion_of_eventless_work_is_learned_from_one_marker():
    stream = strata.opencl.current_stream()
    x = strata.ones(1 << 16, device="opencl")
    for _ in range(3):
        x = x * 2
    seq = stream.seq
    stream.completed(seq)                     # a marker after the launches
    stream.completed(seq)                     # and no second one while nothing new is enqueued
    assert len([item for item in stream._pending if item[0] == seq]) <= 1
    stream.queue.finish()
    assert stream.completed(seq) and stream.query()
    assert x[:2].cpu().tolist() == [8, 8]


def test_a_block_used_on_another_stream_waits_for_it():
    """The allocator's cross-stream record: without per-kernel events, a marker must say when
    the side stream is done with a block before the default stream gets it again."""
    side = strata.opencl.Stream()
    x = strata.ones(1 << 16, device="opencl")
    side.wait_stream(strata.opencl.current_stream())
    with strata.opencl.stream(side):
        y = x * 3                                # records the use of x's block by ``side``
    addr = x._storage.addr
    del x
    z = strata.zeros(1 << 16, device="opencl")          # same size: may reuse only when done
    if z._storage.addr == addr:
        assert side.query()
    strata.opencl.current_stream().wait_stream(side)
    assert y.sum().item() == 3 * (1 << 16) and z.sum().item() == 0


def test_launch_errors_name_the_op_kernel_and_status():
    rt = _runtime()
    x = strata.ones(4, device="opencl")
    buffer, offset = rt.buffer_of(x)
    source = "__kernel void k_wg(__global float* x, const long off) { x[off] = 2.0f; }"
    with pytest.raises(RuntimeError, match=r"OpenCL: launching test \(kernel 'k_wg'\) failed: "
                                           r"clEnqueueNDRangeKernel failed: INVALID_WORK_GROUP"):
        rt.launch("test", source, "k_wg", (3,), [buffer, offset], [x], local_size=(2,))
    assert x.cpu().tolist() == [1, 1, 1, 1]               # nothing ran


def test_traced_launches_still_get_device_events():
    x = strata.ones(100, device="opencl")
    with strata.profiler.profile() as prof:
        (x + 1).sum()
        strata.opencl.synchronize()
    device = [e for e in prof.trace_events() if e.layer == "device"]
    assert {"aten::add.Tensor", "aten::sum.dim_IntList"} <= {e.name for e in device}
    assert all(e.fields["event"] == "CL_COMMAND_NDRANGE_KERNEL" for e in device)


@settings(max_examples=25, deadline=None)
@given(shapes=st.sampled_from([((3, 4), (4,)), ((2, 1, 3), (5, 1)), ((6,), ()), ((1,), (2, 3))]),
       scalar=st.sampled_from([2, -1.5, 0.0, -0.0, 7]), op=st.sampled_from(["add", "mul", "sub"]))
def test_argument_plans_give_torchs_values(shapes, scalar, op):
    """Launches of one key with other shapes and numbers: every listed value reaches the kernel
    in its parameter's place (Note [Argument plans])."""
    rng = np.random.default_rng(len(shapes[0]) + len(shapes[1]))
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    fn = {"add": lambda x, y: x + y * scalar, "mul": lambda x, y: x * y - scalar,
          "sub": lambda x, y: (x - y) / (scalar or 1)}[op]
    got = fn(strata.tensor(a).to("opencl"), strata.tensor(b).to("opencl")).cpu().numpy()
    want = fn(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert np.signbit(got).tolist() == np.signbit(want).tolist()


def test_scalar_conversions_keep_the_sign_of_zero_and_wrap_integers():
    """Python numbers are converted once per (value, dtype): -0.0 must not meet 0.0's entry."""
    x = strata.ones(3, device="opencl")
    assert np.signbit((x * 0.0).cpu().numpy()).tolist() == [False] * 3
    assert np.signbit((x * -0.0).cpu().numpy()).tolist() == [True] * 3
    zero = strata.tensor(-0.0, dtype=strata.float64)         # a 0-dim CPU tensor operand
    assert np.signbit((x * zero).cpu().numpy()).tolist() == [True] * 3
    u = strata.tensor([0, 5], dtype=strata.uint8).to("opencl")
    assert (u - 1).cpu().tolist() == (torch.tensor([0, 5], dtype=torch.uint8) - 1).tolist()
    assert (u + 1.0).cpu().tolist() == [1.0, 6.0] and (u + 1).cpu().tolist() == [1, 6]


def test_the_pointwise_lane_skips_the_meta_function_of_a_known_signature(monkeypatch):
    """Note [Pointwise lane]: the second call with the same dtypes, shapes, strides and numbers
    runs no meta function; anything new (a shape, a number, the default dtype) runs it again."""
    from strata.ops import pointwise as P
    calls = []
    real = P.add.meta
    monkeypatch.setattr(P.add, "meta", lambda *a: calls.append(1) or real(*a))
    x, y = strata.ones(2, 3, device="opencl"), strata.ones(3, device="opencl")
    for _ in range(3):
        z = x + y
    assert len(calls) == 1 and z.shape == (2, 3) and z.cpu().tolist() == [[2.0] * 3] * 2
    first, again = x.t() + 1.5, x.t() + 1.5
    assert len(calls) == 2
    assert (again.shape, again.stride()) == (first.shape, first.stride())
    assert again.cpu().tolist() == (torch.ones(2, 3).t() + 1.5).tolist()
    i = strata.ones(2, dtype=strata.int64, device="opencl")
    assert (i + 0.5).dtype == strata.float32
    strata.set_default_dtype(strata.float64)
    try:
        assert (i + 0.5).dtype == strata.float64
    finally:
        strata.set_default_dtype(strata.float32)
    assert (i + 0.5).dtype == strata.float32 and (i + True).dtype == strata.int64


def test_the_pointwise_lane_still_raises_for_bad_input():
    x, y = strata.ones(3, device="opencl"), strata.ones(4, device="opencl")
    x + x
    with pytest.raises(RuntimeError, match="must match the size"):
        x + y
    b = strata.ones(3, dtype=strata.bool, device="opencl")
    b | b
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        b - b


def test_a_queue_is_flushed_every_few_commands_and_at_sync_points(monkeypatch):
    """streams.py's Note [Flushing]: no more than FLUSH_EVERY commands wait unflushed."""
    from strata.backends.opencl import streams
    rt = _runtime()
    flushes = []
    real = rt.driver.flush
    monkeypatch.setattr(rt.driver, "flush", lambda queue: flushes.append(1) or real(queue))
    stream = rt.current_stream()
    x = strata.ones(4, device="opencl")
    strata.opencl.synchronize()
    assert stream.unflushed == 0
    for _ in range(streams.FLUSH_EVERY * 3):
        x + 1
        assert stream.unflushed < streams.FLUSH_EVERY
    assert len(flushes) == 3
    x + 1
    assert stream.unflushed == 1
    strata.opencl.synchronize()
    assert stream.unflushed == 0


def test_a_repeated_training_step_prints_no_new_kernel():
    """Every kernel key of a step recurs in the next one: a formula made per call (a new key
    each time) would print, and keep, a new kernel per call."""
    from strata.compile.inductor import opencl_pointwise
    strata.manual_seed(0)
    w = strata.randn(6, 4, device="opencl", requires_grad=True)
    x = strata.randn(5, 6, device="opencl")
    target = strata.tensor([0, 3, 1, 2, 3]).to("opencl")
    opt = strata.optim.AdamW([w], lr=0.1)

    def step():
        opt.zero_grad()
        logits = x @ w
        loss = strata.nn.functional.cross_entropy(logits, target) + logits.softmax(1).sum()
        loss.backward()
        opt.step()
    step()
    step()
    known = set(opencl_pointwise._plans)
    step()
    assert set(opencl_pointwise._plans) == known


_GUARDED_SOURCE = """__kernel void k_guarded_fill(__global float* restrict out0, const long s0) {
    const long x = get_global_id(0);
    if (x >= s0) return;
    out0[x] = (float)x;
}
"""
_UNGUARDED_SOURCE = """__kernel void k_unguarded_fill(__global float* restrict out0) {
    out0[get_global_id(0)] = 1.0f;
}
"""


@pytest.mark.parametrize("work_items,want", [(1, ((1,), (1,))), (200, ((200,), (200,))),
                                             (256, ((256,), (256,))), (257, ((512,), (256,))),
                                             (1000, ((1024,), (256,)))])
def test_guarded_launches_take_whole_work_groups(work_items, want):
    from strata.backends.opencl.runtime import grouped
    assert grouped(work_items, 256) == want


@pytest.mark.parametrize("work_items", [1, 3, 257, 1000])
def test_a_guarded_kernel_is_launched_in_work_groups_and_writes_only_its_range(monkeypatch,
                                                                              work_items):
    """Note [Work-group sizes]: with the sizes on, the printer's guarded kernels get a
    work-group size (the range rounded up to whole groups); the work-items past the range
    write nothing; a kernel without the guard is left to the driver."""
    import pyopencl as cl
    rt = _runtime()
    monkeypatch.setattr(rt, "sizes_groups", True)
    monkeypatch.setattr(rt, "_kernels", {})
    sizes = []
    real = rt.driver.enqueue
    monkeypatch.setattr(rt.driver, "enqueue", lambda queue, kernel, global_size, local_size=None,
                        with_event=False: sizes.append((tuple(global_size), local_size)) or
                        real(queue, kernel, global_size, local_size, with_event))
    host = np.full(work_items + 300, -1, np.float32)
    buffer = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                       hostbuf=host)
    rt.launch("test", _GUARDED_SOURCE, "k_guarded_fill", work_items, [buffer, work_items])
    rt.launch("test", _UNGUARDED_SOURCE, "k_unguarded_fill", 2, [buffer])
    cl.enqueue_copy(rt.current_stream().queue, host, buffer)
    want = np.full(work_items + 300, -1, np.float32)
    want[:work_items] = np.arange(work_items)
    want[:2] = 1
    np.testing.assert_array_equal(host, want)
    group = min(256, work_items)
    assert sizes[0] == ((-(-work_items // group) * group,), (group,))
    assert sizes[1] == ((2,), None)
    buffer.release()
