"""``strata._functorch.aot_autograd``, as ``torch._functorch.aot_autograd``."""

from ..compile.aot import aot_function, aot_module_simplified  # noqa: F401
