"""strata.compile: capture (bytecode -> FX graphs + guards), AOT autograd, backends.

    >>> model = strata.compile(model)                 # an OptimizedModule
    >>> fn = strata.compile(fn, backend="eager")      # capture only
    >>> strata._dynamo.explain(fn)(x)                 # graphs, breaks and guards

See docs/compile.md. ``capture/`` is Dynamo's design in small; ``fx/``, ``aot/`` and
``inductor/`` are the later stages.
"""

import functools

from ..nn.modules import module as module_mod
from ..nn.modules.module import Module
from .backends import list_backends, lookup_backend, register_backend
from .capture import eval_frame
from .capture.in_graph import disable as _disable_fn

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Compile a function or module (``torch.compile``); see the module docstring."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    if isinstance(model, OptimizedModule):   # compiling it again compiles the original
        model = model._orig_mod
    model = getattr(model, "_torchdynamo_orig_callable", model)
    compiler_fn, name = lookup_backend(backend)
    if hasattr(compiler_fn, "configured") and (mode is not None or options is not None):
        compiler_fn = compiler_fn.configured(mode, options)   # inductor's mode and options
    ctx = eval_frame.CompileContext(compiler_fn, fullgraph=fullgraph, dynamic=dynamic,
                                    backend_name=name)
    if isinstance(model, Module):
        return OptimizedModule(model, ctx)
    return _compiled_function(model, ctx)


def _compiled_function(fn, ctx):
    import types
    if isinstance(fn, types.MethodType):
        func, bound_self = fn.__func__, fn.__self__

        @functools.wraps(func)
        def compiled_method(*args, **kwargs):
            return ctx.run(func, (bound_self, *args), kwargs)
        compiled_method._strata_compile_context = ctx
        compiled_method._torchdynamo_orig_callable = fn
        return compiled_method
    if isinstance(fn, functools.partial) and isinstance(fn.func, types.FunctionType):
        # its function's frame, with the bound arguments first (as the partial calls it)
        func, bound, keywords = fn.func, fn.args, fn.keywords

        @functools.wraps(func)
        def compiled_partial(*args, **kwargs):
            return ctx.run(func, (*bound, *args), {**keywords, **kwargs})
        compiled_partial._strata_compile_context = ctx
        compiled_partial._torchdynamo_orig_callable = fn
        return compiled_partial
    if not isinstance(fn, types.FunctionType):
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType):
            # a callable object of a Python class: capture its __call__ frame
            return _compiled_function(fn.__call__, ctx)

        def calling(*args, **kwargs):      # a builtin or C callable: a frame that calls it
            return fn(*args, **kwargs)
        return _compiled_function(calling, ctx)

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        return ctx.run(fn, args, kwargs)
    compiled._strata_compile_context = ctx
    compiled._torchdynamo_orig_callable = fn
    return compiled


def _call_module(module, *args, **kwargs):
    return module(*args, **kwargs)


class OptimizedModule(Module):
    """What ``strata.compile(module)`` returns: calls go through the compiled frame of
    ``_orig_mod(*args)`` (hooks included); parameters and state are the original module's."""

    def __init__(self, mod: Module, ctx):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_strata_compile_context"] = ctx
        # A code object of its own per wrapped module, so each has its own cache and limit.
        code = _call_module.__code__.replace()
        import types
        self.__dict__["_entry"] = types.FunctionType(code, _call_module.__globals__,
                                                     "_call_module")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        module = d["_modules"]["_orig_mod"]
        return d["_strata_compile_context"].run(
            d["_entry"], (module, *args), kwargs,
            {"module": module, "args": args, "kwargs": kwargs})   # _call_module's locals

    forward = __call__

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self.__dict__["_modules"]["_orig_mod"]
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


module_mod.compile_hook[0] = compile


def reset():
    """Forget every compiled frame and cache (``torch._dynamo.reset()``)."""
    eval_frame.reset_all()


def disable(fn=None, recursive=True):
    """Run ``fn`` eagerly even when called from a compiled frame (``torch._dynamo.disable``)."""
    if fn is None:
        return lambda f: disable(f, recursive)
    return _disable_fn(fn)


__all__ = ["compile", "OptimizedModule", "reset", "disable", "list_backends",
           "register_backend", "lookup_backend"]
