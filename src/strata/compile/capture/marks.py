"""``mark_dynamic`` / ``mark_static``: per-tensor hints the next capture reads."""


def _dims(t, index):
    return {index} if isinstance(index, int) else set(index)


def mark_dynamic(t, index, *, min=None, max=None):
    """Trace dim ``index`` of ``t`` as a symbolic size from the first compile on."""
    marked = t.__dict__.setdefault("_dynamo_dynamic_indices", set())
    marked |= _dims(t, index)


def maybe_mark_dynamic(t, index):
    mark_dynamic(t, index)


def mark_static(t, index=None):
    """Keep dim ``index`` (every dim when None) of ``t`` static, even with ``dynamic=True``."""
    dims = set(range(t.dim())) if index is None else _dims(t, index)
    t.__dict__.setdefault("_dynamo_static_indices", set()).update(dims)
