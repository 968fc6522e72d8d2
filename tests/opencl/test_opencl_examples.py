"""The examples' training on opencl (as CI runs it): the MLP and the CNN on digits print the
CPU's steps, loss and accuracy. (The character transformer also trains on opencl, but its
dropout draws Philox numbers, not the CPU's, and sampling its text takes minutes on PoCL: not
run here.)"""

import pytest
from test_examples import run_example, summary

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


@pytest.mark.parametrize("script", ["mlp_digits.py", "cnn_digits.py"])
def test_example_on_opencl_matches_cpu(script):
    args = ("--quiet", "--steps", "10")
    cl_steps, cl_loss, cl_acc = summary(run_example(script, *args, "--device", "opencl"))
    cpu_steps, cpu_loss, cpu_acc = summary(run_example(script, *args))
    assert cl_steps == cpu_steps
    assert cl_loss == pytest.approx(cpu_loss, abs=2e-4)
    assert cl_acc == pytest.approx(cpu_acc, abs=0.3)   # at most one test image of 360 differs
