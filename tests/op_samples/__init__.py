"""An OpInfo-style database: sample inputs for every aten op, one file per op family.

Each family module exports ``SAMPLES``: a dict from an op's qualified name (``"aten::add.Tensor"``)
to a list of ``Sample``s. ``tests/test_op_db.py`` runs every sample against PyTorch (values,
dtypes, shapes), on non-contiguous inputs, and on the meta device, and fails for any aten op that
has no samples.
"""

from dataclasses import dataclass, field
from importlib import import_module

FAMILIES = ("sparse", "pointwise", "special", "factory", "shape", "reductions", "sorting",
            "indexing", "scatter", "linalg", "nn", "activation", "loss", "distributions",
            "rnn", "complex", "fft", "random_fills")


@dataclass
class Sample:
    """``fn(m, *inputs)`` is run with m = strata and m = torch; NumPy arrays become tensors."""

    fn: object
    inputs: tuple = ()
    atol: float | None = None
    rtol: float | None = None
    noncontiguous: bool = True     # also run with non-contiguous copies of the inputs
    meta: bool = True              # also check shapes/dtypes/strides on the meta device
    check_stride: bool = False
    random: bool = False           # output is random: compare shape/dtype only
    name: str = ""
    extra: dict = field(default_factory=dict)


def all_samples() -> dict:
    out = {}
    for family in FAMILIES:
        module = import_module(f"op_samples.{family}")
        for qualname, samples in module.SAMPLES.items():
            out.setdefault(qualname, []).extend(samples)
    return out
