"""Every environment variable strata reads, read once, here.

Other modules import the values from this module instead of touching ``os.environ``, so a
reader finds every knob in one file.
"""

import os
import warnings


def _flag(name: str) -> bool:
    value = os.environ.get(name, "0")
    if value not in ("0", "1"):
        warnings.warn(f"{name} should be 0 or 1, got {value!r}; treating it as 0")
        return False
    return value == "1"


# Print every dispatcher call and redispatch (like TORCH_SHOW_DISPATCH_TRACE).
show_dispatch_trace: bool = _flag("STRATA_SHOW_DISPATCH_TRACE")
