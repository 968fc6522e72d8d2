"""RNN sequence helpers: ``pad_sequence`` and the ``PackedSequence`` type.

strata's RNNs take padded tensors; packing (which only saves work on cuDNN) is not implemented,
and ``pack_padded_sequence`` says so.
"""

from collections import namedtuple

PackedSequence = namedtuple("PackedSequence",
                            ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    from ...creation import full
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    shape = (len(sequences), max_len) + trailing if batch_first else \
        (max_len, len(sequences)) + trailing
    out = full(shape, padding_value, dtype=sequences[0].dtype, device=sequences[0].device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        sl = slice(max_len - n, max_len) if padding_side == "left" else slice(0, n)
        if batch_first:
            out[i, sl] = s
        else:
            out[sl, i] = s
    return out


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    raise RuntimeError("nn.utils.rnn.pack_padded_sequence is not supported by strata: its RNNs "
                       "run on padded tensors (pass the padded batch directly)")
