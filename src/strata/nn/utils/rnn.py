"""Variable-length sequences for RNNs (``torch/nn/utils/rnn.py``): padding and packing.

A ``PackedSequence`` holds the time steps of a batch of sequences, longest first, one after the
other: ``data[sum(batch_sizes[:t]):][:batch_sizes[t]]`` are the sequences still running at step
t. strata's RNNs take one by unpacking it to a padded batch and running the recurrence with the
steps past each sequence's end masked out (Note [Packed sequences] in ``modules/rnn.py``), then
packing the output the same way; the numbers are those of PyTorch's packed kernels.
"""

from collections import namedtuple
from itertools import pairwise

from ... import creation
from ...core import dtype as D
from ...ops import shape as S
from ...ops.scatter import index_select
from ...tensor_new import tensor

_PackedSequenceBase = namedtuple("PackedSequence",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _invert_permutation(permutation):
    if permutation is None:
        return None
    inverse = creation.zeros_like(permutation)
    inverse.scatter_(0, permutation, creation.arange(permutation.numel(),
                                                     device=permutation.device))
    return inverse


class PackedSequence(_PackedSequenceBase):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``; build it with
    ``pack_padded_sequence`` or ``pack_sequence``, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = _invert_permutation(sorted_indices)
        if batch_sizes is None:   # PyTorch's internal form: (data, batch_sizes) as a pair
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        indices = [None if i is None else i.to(data.device)
                   for i in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *indices)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return self.data.is_pinned()


def _lengths_list(lengths, batch_size):
    values = lengths.tolist() if hasattr(lengths, "tolist") else list(lengths)
    values = [int(v) for v in values]
    if len(values) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(values)} (batch_size={batch_size})")
    return values


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (``T x B x *``, or ``B x T x *`` with ``batch_first``) of sequences of
    the given lengths."""
    if batch_first:
        input = S.transpose(input, 0, 1)
    lengths = _lengths_list(lengths, input.shape[1])
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in pairwise(lengths)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        sorted_indices = tensor(order, dtype=D.int64, device=input.device)
        input = index_select(input, 1, sorted_indices)
        lengths = [lengths[i] for i in order]
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    steps = lengths[0] if lengths else 0
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(steps)]
    data = S.cat([S.slice(S.select(input, 0, t), 0, 0, b) for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, tensor(batch_sizes, dtype=D.int64),
                          sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)`` in the original order."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    steps, batch = len(batch_sizes), batch_sizes[0] if batch_sizes else 0
    if total_length is not None and total_length < steps:
        raise ValueError(f"Expected total_length to be at least the length of the longest "
                         f"sequence in input, but got total_length={total_length} and max "
                         f"sequence length being {steps}")
    rows, start = [], 0
    for b in batch_sizes:
        step = S.slice(data, 0, start, start + b)
        if b < batch:
            fill = creation.full((batch - b,) + tuple(data.shape[1:]), padding_value,
                                 dtype=data.dtype, device=data.device)
            step = S.cat([step, fill], 0)
        rows.append(step)
        start += b
    for _ in range(steps, total_length or steps):
        rows.append(creation.full((batch,) + tuple(data.shape[1:]), padding_value,
                                  dtype=data.dtype, device=data.device))
    padded = S.stack(rows, 0)
    lengths = tensor([sum(1 for b in batch_sizes if b > i) for i in range(batch)],
                              dtype=D.int64)
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = index_select(lengths, 0, sequence.unsorted_indices.cpu())
    if batch_first:
        padded = S.transpose(padded, 0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths into one padded ``T x B x *`` (``B x T x *``)."""
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    shape = (len(sequences), max_len) + trailing if batch_first else \
        (max_len, len(sequences)) + trailing
    out = creation.full(shape, padding_value, dtype=sequences[0].dtype,
                        device=sequences[0].device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        sl = slice(max_len - n, max_len) if padding_side == "left" else slice(0, n)
        if batch_first:
            out[i, sl] = s
        else:
            out[sl, i] = s
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = S.transpose(padded_sequences, 0, 1)
    lengths = _lengths_list(lengths, padded_sequences.shape[0])
    return [S.slice(padded_sequences[i], 0, 0, n) for i, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (longest first unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a ``PackedSequence`` holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
