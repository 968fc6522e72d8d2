"""``functional_call``: call a module with some of its parameters and buffers replaced by the
given tensors, for the length of one call (``torch/_functorch/functional_call.py``,
``torch/nn/utils/stateless.py``). This is how ``grad``/``vmap`` differentiate or map over a
module's weights:

    >>> params = dict(model.named_parameters())
    >>> out = strata.func.functional_call(model, params, (x,))
"""

import contextlib
from collections.abc import Sequence

from ..ops.shape import stack

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named tensors of ``parameter_and_buffer_dicts``
    (one dict or a sequence of dicts with distinct keys) standing in for the module's own.
    ``tie_weights``: a value given for one of several tied names replaces all of them.
    ``strict``: the keys must be exactly the module's parameters and buffers."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, tensors, tie_weights, strict):
        return module(*args, **kwargs)


def stack_module_state(models):
    """``(params, buffers)``: each name's tensors of ``models`` (same class, same train/eval
    mode) stacked on a new first dim, for ``vmap`` over an ensemble with ``functional_call``.
    Stacked parameters are new leaves (optimizable), unrelated to the models' own.

        >>> params, buffers = stack_module_state(models)
        >>> vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), (0, 0, None))(
        ...     params, buffers, x)
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        per_model = [dict(named(m)) for m in models]
        return {name: _stacked_leaf([tensors[name] for tensors in per_model], name)
                for name in per_model[0]}
    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())


def _stacked_leaf(tensors, name):
    wants_grad = [t.requires_grad for t in tensors]
    if any(wants_grad) and not all(wants_grad):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if all(wants_grad) else result


def _named_tensors(module):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module, tensors):
    """Spread a value given for one tied name to all names of that tensor."""
    tied = {}
    for name, t in _named_tensors(module).items():
        tied.setdefault(id(t), set()).add(name)
    given = set(tensors)
    out = dict(tensors)
    for names in tied.values():
        named_here = names & given
        if len(names) < 2 or not named_here:
            continue
        if len({id(tensors[n]) for n in named_here}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
        value = tensors[next(iter(named_here))]
        out.update(dict.fromkeys(names, value))
    return out


def _check_keys(module, tensors):
    expected = set(_named_tensors(module))
    unexpected = sorted(set(tensors) - expected)
    missing = sorted(expected - set(tensors))
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
            module._get_name(), "\n\t".join(msgs)))


@contextlib.contextmanager
def _reparametrize_module(module, tensors, tie_weights, strict):
    """Put each tensor in its module's parameter / buffer slot (or as a plain attribute) and
    put the originals back afterwards, even if the call raises."""
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        _check_keys(module, tensors)
    restore = []
    try:
        for name, value in tensors.items():
            prefix, _, attr = name.rpartition(".")
            owner = module.get_submodule(prefix) if prefix else module
            restore.append(_swap(owner, attr, value))
        yield
    finally:
        for undo in reversed(restore):
            undo()


def _swap(owner, attr, value):
    """Install ``value`` as ``owner.attr``; return the function that undoes it. The slot
    dicts take any tensor, so a plain tensor can stand in for a Parameter."""
    for store in (owner._parameters, owner._buffers):
        if attr in store:
            old = store[attr]
            store[attr] = value

            def undo(store=store, old=old):
                store[attr] = old
            return undo
    if isinstance(getattr(type(owner), attr, None), property):
        # a parametrized tensor (nn.utils.parametrize): its setter runs the parametrization's
        # right_inverse, as PyTorch's swap_tensor does with setattr; the getter's value goes back
        old = getattr(owner, attr)
        setattr(owner, attr, value)
        return lambda: setattr(owner, attr, old)
    missing = object()
    old = owner.__dict__.get(attr, missing)
    owner.__dict__[attr] = value

    def undo_attr():
        if old is missing:
            del owner.__dict__[attr]
        else:
            owner.__dict__[attr] = old
    return undo_attr
