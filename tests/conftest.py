import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

# CI runs a fixed, bounded set of examples; locally you can raise it with HYPOTHESIS_PROFILE=dev.
settings.register_profile("ci", max_examples=25, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def two_threads():
    """strata's CPU pool at two threads for the test (kernels split over threads), restored
    after."""
    import strata
    before = strata.get_num_threads()
    strata.set_num_threads(2)
    yield
    strata.set_num_threads(before)


@pytest.fixture(autouse=True)
def _keep_torch_distribution_validation():
    """torch._dynamo's explain/export turn PyTorch's distribution argument checks off for the
    whole process (Distribution.set_default_validate_args(False) in eval_frame.py); the compile
    tests that ask Dynamo for its graph counts must not change what later tests compare."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "distributions"):
        yield
        return
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution._validate_args = before
