"""strata.explain on opencl: the launch names its command queue, and the device execution
(its OpenCL event, with profiled timings) sits under the launch that queued it."""

import pytest

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def test_explain_names_queue_event_and_device_timings():
    e = strata.explain("z = x + y", device="opencl", file=False)
    assert e.layers[-3:] == ["runtime", "device", "sync"]
    launch = next(line for line in e.text.splitlines() if "launch aten::add.Tensor" in line)
    assert "cl_command_queue 0 of" in launch and "in order, profiled" in launch
    device = [line for line in e.text.splitlines() if "CL_COMMAND_NDRANGE_KERNEL" in line]
    assert len(device) == 1 and " device " in device[0]
    assert "ran=" in device[0] and "queued_to_start=" in device[0]
    assert "after the launch" in device[0]

    def nodes(roots):
        for node in roots:
            yield node
            yield from nodes(node.children)
    executed = next(n for n in nodes(e.roots) if n.event.layer == "device")
    assert executed.parent.event.name == "launch"        # under the launch that queued it
    assert executed.event.fields["seq"] == executed.parent.event.fields["seq"]


def test_host_copies_are_traced_with_bytes_and_device_times(tmp_path):
    """Uploads and downloads are "runtime" copy spans (kind, bytes, queue, sequence number)
    with their profiled execution on the device track, as on sim."""
    host = strata.arange(1000, dtype=strata.float32)
    with strata.profiler.profile() as prof:
        x = host.to("opencl")                       # H2D
        back = (x * 1).cpu()                        # D2H, a sync point
        strata.opencl.synchronize()
    copies = [e for e in prof.trace_events() if e.layer == "runtime" and e.name == "copy"]
    assert [e.fields["kind"] for e in copies] == ["H2D", "D2H"]
    assert all(e.fields["nbytes"] == 4000 for e in copies)
    device = {e.name: e for e in prof.trace_events() if e.layer == "device"}
    assert device["copy H2D"].fields["event"] == "CL_COMMAND_WRITE_BUFFER"
    assert device["copy D2H"].fields["event"] == "CL_COMMAND_READ_BUFFER"
    assert all(e.end_ns >= e.start_ns for e in device.values())
    assert back.tolist() == host.tolist()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    assert "copy H2D" in (tmp_path / "trace.json").read_text()


def test_explain_shows_a_download_and_its_read_buffer_event():
    e = strata.explain("z = x.cpu()", device="opencl", file=False)
    lines = e.text.splitlines()
    assert any(" copy " in line and "nbytes=" in line and "cl_command_queue" in line
               for line in lines if "runtime" in line)
    assert any("copy D2H" in line and "CL_COMMAND_READ_BUFFER" in line for line in lines)
