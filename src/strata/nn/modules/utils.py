"""``torch.nn.modules.utils``: the argument helpers that layer code imports (``_pair`` for a
kernel size given as one int or two, ...) and ``consume_prefix_in_state_dict_if_present``, which
loads a checkpoint saved from a ``DataParallel``/``DistributedDataParallel`` wrapper
(``module.`` prefixed keys) into the bare model.

    state_dict = torch.load("ddp.pt")
    consume_prefix_in_state_dict_if_present(state_dict, "module.")
    model.load_state_dict(state_dict)
"""

import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    """A parser that keeps an iterable as a tuple and repeats a single value ``n`` times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed with each element repeated ``n`` times: a conv's per-dim padding as
    ``F.pad``'s (last dim first) pairs."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with ``None`` entries taken from the input's sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # '' is the wrapper's own entry; 'module' the model's; 'module.x' the rest
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)
