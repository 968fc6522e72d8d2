"""The profiler on ``opencl`` (issue 10, "seeing it"), as a user reads it: the table's device
columns name the device whose executions were recorded (``Self OPENCL``, as PyTorch's ``Self
CUDA``), and the Chrome trace has a device track per command queue, named after the device
(no device process: the pid is a made-up number for Perfetto)."""

import json

import pytest

import strata
from strata.profiler import profile

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def test_table_and_chrome_trace_name_the_opencl_device(tmp_path):
    x = strata.ones(64, 64, device="opencl")
    with profile() as prof:
        total = (x @ x).sum().item()
    assert total == 64 ** 3
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert "Self OPENCL" in table and "SIM" not in table
    mm = next(e for e in prof.key_averages() if e.key == "aten::mm")
    assert mm.self_device_time_total > 0
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and "name" in e["args"]}
    assert "opencl:0" in names and "opencl:0 stream 0" in names
    assert not any("device process" in n for n in names)
    device_ops = [e["name"] for e in events if e.get("cat") == "device"]
    assert any("mm" in name for name in device_ops), device_ops
