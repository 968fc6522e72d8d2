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
