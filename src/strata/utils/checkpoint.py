"""Activation checkpointing (``torch/utils/checkpoint.py``): run a block without keeping the
tensors its backward needs, and run the block again during backward to get them back.

    >>> y = checkpoint(block, x, use_reentrant=False)   # block's activations are not kept
    >>> y.sum().backward()                               # block runs again here

Two variants, as in PyTorch:

- ``use_reentrant=False``: the forward runs under ``saved_tensors_hooks`` whose pack hook
  stores only a position number. The first unpack in backward re-runs the block (with the
  forward's RNG state) under a second hook that collects what it saves, by position; each
  unpack then takes its tensor out of that collection.
- ``use_reentrant=True``: an autograd ``Function`` runs the block under ``no_grad``, and its
  backward re-runs it with grad enabled and calls ``autograd.backward`` from inside backward
  (a reentrant backward).
"""

import contextlib
import warnings

from .. import autograd
from .. import random as _random
from .._tensor import _is_tensor
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
]

_RECOMMEND = ("use_reentrant=False is recommended, but if you need to preserve the current "
              "default behavior, you can pass use_reentrant=True. Refer to docs for more details "
              "on the differences between the two variants.")
_USE_REENTRANT = ("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                  "explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
                  "will raise an exception. " + _RECOMMEND)
_USE_REENTRANT_SEQUENTIAL = ("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                             "parameter should be passed explicitly. In version 2.9 we will raise "
                             "an exception if use_reentrant is not passed. " + _RECOMMEND)


class CheckpointError(RuntimeError):
    """The recomputed forward saved different tensors from the original one."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Detached copies of the tensors in ``inputs`` that keep their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if _is_tensor(inp):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def _rng_context(preserve, state):
    """Recompute with the forward's RNG state, leaving the caller's state untouched."""
    if not preserve:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(_random.fork_rng())
    _random.set_rng_state(state)
    return stack


class CheckpointFunction(autograd.Function):
    """The reentrant variant: forward without a graph, backward re-runs it with one."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(a.requires_grad for a in args if _is_tensor(a)):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _random.get_rng_state()
        ctx.inputs = [None if _is_tensor(a) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.save_for_backward(*(a for a in args if _is_tensor(a)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not autograd._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_context(ctx.preserve_rng_state, getattr(ctx, "fwd_cpu_state", None)):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if _is_tensor(outputs):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if _is_tensor(o) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(t.grad if _is_tensor(t) else None for t in detached)


class _Frame:
    """One non-reentrant checkpoint call: how to recompute, what the forward saved (shape,
    dtype, device per position) and the recomputed tensors not yet handed back."""

    def __init__(self, recompute, check, inputs):
        self.recompute = recompute
        self.check = check
        self.inputs = {id(a) for a in inputs if _is_tensor(a)}
        self.metadata = []
        self.recomputed = {}

    def pack(self, t):
        self.metadata.append(_metadata(t))
        return len(self.metadata) - 1

    def unpack(self, index):
        if index not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(index)

    def _recompute(self):
        # A backward with create_graph=True runs with grad mode on: the recomputed activations
        # keep their graph then, back to the checkpoint's inputs, so a double backward goes
        # through them. Otherwise they come back detached (the inputs as themselves).
        got = []
        create_graph = is_grad_enabled()

        def keep(t):
            got.append(t if create_graph or id(t) in self.inputs else t.detach())
            return t if create_graph else None   # the recomputed graph's own saved tensors
        with saved_tensors_hooks(keep, _identity if create_graph else _unused_unpack), \
                enable_grad():
            self.recompute()
        if self.check:
            self._check(got)
        self.recomputed = dict(enumerate(got))

    def _check(self, got):
        if len(got) != len(self.metadata):
            raise CheckpointError(
                f"torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.metadata)}\nNumber of tensors saved during recomputation: "
                f"{len(got)}.")
        diff = "".join(f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: "
                       f"{_metadata(t)}\n"
                       for i, (m, t) in enumerate(zip(self.metadata, got)) if m != _metadata(t))
        if diff:
            raise CheckpointError(f"torch.utils.checkpoint: Recomputed values for the following "
                                  f"tensors have different metadata than during the forward "
                                  f"pass.\n{diff}.")


def _identity(t):
    return t


def _unused_unpack(_):
    raise CheckpointError("torch.utils.checkpoint: the recomputed forward's graph is never run "
                          "backward")


def _metadata(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args,
                                  kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = _random.get_rng_state() if preserve else None

    def recompute():
        with _rng_context(preserve, rng_state), recompute_context:
            function(*args, **kwargs)

    frame = _Frame(recompute, determinism_check == "default",
                   tuple(args) + tuple(kwargs.values()))
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)``, keeping only its inputs for backward and recomputing its
    activations there. ``preserve_rng_state=True`` (a keyword) replays the forward's RNG state
    so dropout masks match. ``debug`` and ``early_stop`` are accepted for compatibility:
    strata always recomputes the whole block and reports mismatches without an op trace.

        >>> y = checkpoint(lambda t: (t * 2).sin(), x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a Sequential or a list of callables) in order, checkpointing all but
    the last of ``segments`` equal chunks.

        >>> y = checkpoint_sequential(model, 2, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_SEQUENTIAL, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, "children"):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
