"""Backends: what turns a captured FX graph into something to run.

The contract is PyTorch's: ``backend(gm: fx.GraphModule, example_inputs: list[Tensor]) ->
callable`` taking the graph's inputs in order. ``"eager"`` runs the captured graph as Python
(capture only); ``"aot_eager"`` retraces it through AOT autograd at the aten level (forward and
backward graphs, functionalised) and runs those graphs as Python; ``"inductor"`` generates
kernels. Any callable with that signature is a backend; ``register_backend`` names one.
"""

import warnings

_BACKENDS: dict = {}


class InvalidBackend(RuntimeError):
    """An unknown backend name (``torch._dynamo.exc.InvalidBackend``)."""

_TAGS: dict = {}


def register_backend(compiler_fn=None, name: str | None = None, tags=()):
    """Register ``compiler_fn`` under ``name`` (``torch._dynamo.register_backend``); a decorator
    when called without ``compiler_fn``."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    name = name or compiler_fn.__name__
    if name in _BACKENDS and _BACKENDS[name] is not compiler_fn:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name] = compiler_fn
    _TAGS[name] = tuple(tags)
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """Names of the registered backends, as ``torch._dynamo.list_backends()``."""
    _load_inductor()
    excluded = set(exclude_tags or ())
    names = {n for n in _BACKENDS if not excluded.intersection(_TAGS[n])} | {"inductor"}
    return sorted(names)


def lookup_backend(backend):
    """(compiler callable, name) for a backend name or callable."""
    if callable(backend):
        return backend, getattr(backend, "__name__", "custom")
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string or a callable, got {type(backend).__name__}")
    if backend == "inductor":
        _load_inductor()
        return _BACKENDS.get("inductor", _inductor_fallback), "inductor"
    if backend not in _BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `strata._dynamo.list_backends()` "
                         "for available backends.")
    return _BACKENDS[backend], backend


@register_backend(name="eager", tags=("debug",))
def eager(gm, example_inputs):
    """Run the captured graph as it is: the torch-level ops, in Python."""
    return gm.forward


eager.shape_generic = True   # the graph computes dynamic sizes itself


@register_backend(name="aot_eager", tags=("debug",))
def aot_eager(gm, example_inputs):
    """AOT autograd with identity compilers: aten-level forward/backward graphs run as Python."""
    from . import aot
    return aot.aot_eager(gm, example_inputs)


@register_backend(name="aot_eager_decomp_partition", tags=("debug",))
def aot_eager_decomp_partition(gm, example_inputs):
    """aot_eager with every decomposition to primitives and the min-cut partitioner."""
    from . import aot
    return aot.aot_eager_decomp_partition(gm, example_inputs)


_inductor_warned = [False]


def _load_inductor():
    """The inductor engineer's module registers "inductor"; until it does, aot_eager stands in."""
    if "inductor" in _BACKENDS:
        return
    try:
        from . import inductor as inductor_pkg   # noqa: F401  (registers itself when complete)
    except ImportError:
        pass


def _inductor_fallback(gm, example_inputs):
    if not _inductor_warned[0]:
        _inductor_warned[0] = True
        warnings.warn("strata.compile: the inductor backend's code generator is not available; "
                      "running with aot_eager instead", stacklevel=2)
    return aot_eager(gm, example_inputs)
