"""Turning a list of samples into a batch: ``default_collate`` and ``default_convert``
(``torch/utils/data/_utils/collate.py``).

Tensors are stacked; NumPy arrays and scalars become tensors first; Python floats become a
float64 tensor and ints an int64 tensor (bools a bool tensor); strings and bytes stay a list;
mappings, namedtuples and sequences are collated field by field (a tuple of fields becomes a list,
as in PyTorch).
"""

import collections.abc
import copy
import re

import numpy as np

from ..._tensor import Tensor
from ...core import dtype as D
from ...creation import as_tensor, tensor
from ...ops import shape as S

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def default_convert(data):
    """Without batching (``batch_size=None``): NumPy data becomes tensors, containers recurse."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type is np.ndarray and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(template, values):
    """A mapping of ``template``'s type holding ``values`` (a plain dict if that fails)."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_sequence(template, values):
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(template)(values)
    except TypeError:
        return values


def pin_memory(data):
    """``data`` with every tensor (and every object with a ``pin_memory`` method) copied into
    pinned memory, containers rebuilt as ``torch/utils/data/_utils/pin_memory.py`` does."""
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: pin_memory(value) for key, value in data.items()})
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # namedtuple
            return type(data)(*(pin_memory(d) for d in data))
        return type(data)(pin_memory(d) for d in data)
    if isinstance(data, collections.abc.Sequence):
        return _rebuild_sequence(data, [pin_memory(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` with per-type functions from ``collate_fn_map``, recursing into
    containers."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch],
                                                    collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        return _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return S.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=D.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# Looked up by exact type first, then by isinstance in this order (bool is an int).
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """The DataLoader's default ``collate_fn``: see the module docstring for the rules."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
