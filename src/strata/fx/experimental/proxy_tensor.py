"""``strata.fx.experimental.proxy_tensor``: aten-level tracing, as torch's ``make_fx``."""

from ...compile.aot.proxy_tensor import ProxyTensorMode, make_fx  # noqa: F401
