"""The capture engineer's differential suite and random-program fuzzer (tests/compile/
test_differential.py, test_capture_fuzz.py), run with ``backend="inductor"``: every case
compiled to generated kernels gives eager's outputs, gradients and input updates."""

import pytest
import test_capture_fuzz as fuzz
import test_differential as differential
from hypothesis import given, settings


@pytest.mark.parametrize("name", sorted(differential.CASES))
def test_differential_cases(name):
    differential._check(name, "inductor")


@settings(max_examples=20, deadline=None)
@given(fuzz.programs())
def test_random_programs(program):
    fuzz._check(program, "inductor")
