"""Fixtures shared by the opencl tests."""

import pytest


@pytest.fixture
def launches(monkeypatch):
    """The op name of every opencl launch, general or prepared (the pointwise lane's are the
    latter), in order."""
    from strata.backends.opencl import runtime
    names = []
    for name in ("launch", "enqueue_prepared"):
        real = getattr(runtime.OpenCLRuntime, name)

        def counted(self, op_name, *args, real=real, **kwargs):
            names.append(op_name)
            return real(self, op_name, *args, **kwargs)
        monkeypatch.setattr(runtime.OpenCLRuntime, name, counted)
    return names
