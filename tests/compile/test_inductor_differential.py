"""The capture engineer's differential suite and random-program fuzzer (tests/compile/
test_differential.py, test_capture_fuzz.py), run with ``backend="inductor"``: every case
compiled to generated kernels gives eager's outputs, gradients and input updates."""

import numpy as np
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


@pytest.mark.parametrize("module_name", ["mlp_digits", "cnn_digits"])
def test_example_training_matches_eager(module_name):
    """examples/ trained 12 steps with ``--compile inductor``: eager's accuracy and weights."""
    import test_examples_compile as examples
    eager_acc, eager_params = examples._train(module_name, None)
    acc, params = examples._train(module_name, "inductor")
    assert acc == eager_acc
    for p, e in zip(params, eager_params):
        np.testing.assert_allclose(p.numpy(), e.numpy(), atol=1e-5)
