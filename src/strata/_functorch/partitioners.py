"""``strata._functorch.partitioners``, as ``torch._functorch.partitioners``."""

from ..compile.aot import default_partition, min_cut_rematerialization_partition  # noqa: F401
