"""``strata.return_types``: the named tuples that ops with several outputs return, as
``torch.return_types``.

    >>> r = strata.tensor([[1., 5.], [3., 2.]]).max(dim=1)
    >>> r.values, r.indices          # or: values, indices = r
    (tensor([5., 3.]), tensor([1, 0]))
"""

from collections import namedtuple


def structseq(name, fields):
    """A named tuple class that prints as PyTorch prints its structseq results."""
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"strata.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})


max = structseq("max", ("values", "indices"))  # noqa: A001
min = structseq("min", ("values", "indices"))  # noqa: A001
aminmax = structseq("aminmax", ("min", "max"))
sort = structseq("sort", ("values", "indices"))
histogram = structseq("histogram", ("hist", "bin_edges"))
topk = structseq("topk", ("values", "indices"))
kthvalue = structseq("kthvalue", ("values", "indices"))
median = structseq("median", ("values", "indices"))
nanmedian = structseq("nanmedian", ("values", "indices"))
mode = structseq("mode", ("values", "indices"))
cummax = structseq("cummax", ("values", "indices"))
cummin = structseq("cummin", ("values", "indices"))
frexp = structseq("frexp", ("mantissa", "exponent"))
qr = structseq("qr", ("Q", "R"))
triangular_solve = structseq("triangular_solve", ("solution", "cloned_coefficient"))
histogramdd = structseq("histogramdd", ("hist", "bin_edges"))
