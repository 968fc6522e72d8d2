"""``vmap``: map a function over a dimension of its inputs (``torch/_functorch/vmap.py``).

strata runs vmap as PyTorch's slow fallback does for an op without a batching rule: it calls
``func`` once per sample (inputs sliced with ``select`` along their ``in_dims``) and stacks the
results along ``out_dims``. There are no batching rules, so the speed is that of a Python loop;
the results, gradients and error messages are PyTorch's. Transforms compose because each call
is ordinary eager code: ``vmap(grad(loss), in_dims=(None, 0, 0))`` gives per-sample gradients.

``randomness``: ``"error"`` raises on any random op inside, ``"different"`` lets every sample
draw its own numbers, ``"same"`` replays one RNG state for every sample.

    >>> strata.vmap(strata.dot)(a, b)   # a, b: [B, N] -> [B]
"""

import functools

from .. import random as _random
from .._tensor import _is_tensor
from ..dispatch.modes import TorchDispatchMode
from ..ops import shape as S
from .pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOM_IN_ERROR_MODE = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap")


class _RefuseRandomness(TorchDispatchMode):
    """randomness='error': any op tagged random raises before drawing."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if "random" in func.tags:
            raise RuntimeError(_RANDOM_IN_ERROR_MODE)
        return func(*args, **(kwargs or {}))


def _name(func):
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, results stacked at
    ``out_dims`` (ints, None, or pytrees of them matching the inputs / outputs).
    ``chunk_size`` is validated and otherwise unused: every sample runs on its own."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             f"be an int, None or a python collection of ints representing "
                             f"where in the outputs the vmapped dimension should appear.")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        samples = []
        rng_state = _random.get_rng_state() if randomness == "same" else None
        for b in range(batch_size):
            if rng_state is not None:
                _random.set_rng_state(rng_state)
            flat = [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)]
            sample_args = tree_unflatten(flat, spec)
            if randomness == "error":
                with _RefuseRandomness():
                    samples.append(func(*sample_args, **kwargs))
            else:
                samples.append(func(*sample_args, **kwargs))
        return _stack_outputs(func, samples, out_dims)
    return wrapped


def _process_inputs(func, in_dims, args):
    """``(batch_size, flat_in_dims, flat_args, spec)``, with PyTorch's checks."""
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         f"add inputs, or you are trying to vmap over a function with no "
                         f"inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if not _is_tensor(arg):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if not -arg.dim() <= d < arg.dim():
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        flat_in_dims[i] = d % arg.dim()
    sizes = [a.size(d) for a, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if sizes[0] == 0:
        raise ValueError(f"vmap({_name(func)}): strata runs vmap as a per-sample loop and "
                         f"cannot map over a dimension of size 0")
    return sizes[0], flat_in_dims, flat_args, spec


def _stack_outputs(func, samples, out_dims):
    """Stack each output leaf of the per-sample results along its out_dim."""
    flat_samples = [tree_flatten(s) for s in samples]
    spec = flat_samples[0][1]
    if _is_tensor(samples[0]) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        out_dims = out_dims[0]
    flat_out_dims = broadcast_to_and_flatten(out_dims, spec)
    if flat_out_dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         f"is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {tree_flatten(out_dims)[1]} but outputs has structure "
                         f"{spec}.")
    name = _name(func)
    out = []
    for k, d in enumerate(flat_out_dims):
        leaves = [leaves[k] for leaves, _ in flat_samples]
        if d is None:
            out.append(_unbatched(name, leaves))
            continue
        if not all(_is_tensor(t) for t in leaves):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(leaves[0])}. Did you mean to set out_dims= to None for "
                             f"output?")
        out.append(S.stack(leaves, d))
    return tree_unflatten(out, spec)


def _unbatched(name, leaves):
    """An output with out_dim None must not vary across samples; the loop can only see that
    through its values, so an output that differs between samples is refused."""
    first = leaves[0]
    for other in leaves[1:]:
        same = other is first or (
            _is_tensor(first) and _is_tensor(other) and first.shape == other.shape
            and bool((first == other).all())) or (not _is_tensor(first) and other == first)
        if not same:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                             f"out_dim is None")
    return first
