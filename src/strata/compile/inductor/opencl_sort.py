"""The OpenCL device's sorting: ``sort`` (so ``argsort``, ``msort``), ``topk``, ``kthvalue``.

A rank sort in two loop-IR kernels (opencl_nn.window), along the last dim of a transposed view:
the rank of element i is the number of elements of its row that sort before it (smaller, or
equal with a smaller index: stable; NaN after every number ascending, before them descending,
as ATen orders it), then output position r gathers the element whose rank is r. Each element
compares with its whole row, n^2 work per row of n: simple and exact for the short rows of
models (top-k of logits, argsort of a batch); a bitonic or radix sort in local memory is the
next step for long rows.
"""

from ...core.shape import contiguous_strides
from ...ops import sorting as SO
from .ir import ops
from .opencl_nn import window
from .opencl_pointwise import clone, runtime_of


def _nan(v):
    return f"({v} != {v})"


def _rank_term(B, index, rindex):
    *lead, i = index
    (j,) = rindex
    a, b = B["inp"].load((*lead, j)), B["inp"].load(index)
    ascending = f"((!{_nan(a)} && {_nan(b)}) || {a} < {b})"
    descending = f"(({_nan(a)} && !{_nan(b)}) || {a} > {b})"
    equal = f"({a} == {b} || ({_nan(a)} && {_nan(b)}))"
    return ops.index_expr(f"(desc ? {descending} : {ascending}) || ({equal} && {j} < {i})",
                          "int64")


def _place_term(B, index, rindex):
    *lead, r = index
    (j,) = rindex
    return ops.index_expr(f"{B['rank'].load((*lead, j))} == {r} ? {j} : 0", "int64")


def _placed_value(B, index):
    return B["inp"].load((*index[:-1], str(ops.load("red", "0"))))


def _placed_index(B, index):
    return ops.load("red", "0")


def sort(self, stable=None, dim=-1, descending=False):
    """(values, indices), always stable (a stable order is one of the orders ``stable=False``
    allows)."""
    values_spec, indices_spec = SO.sort.meta(self, stable, dim, descending)
    rt = runtime_of(self)
    shape = tuple(values_spec.shape)
    values = rt.empty(shape, contiguous_strides(shape), values_spec.dtype)
    indices = rt.empty(shape, contiguous_strides(shape), indices_spec.dtype)
    if not self.numel():
        return values, indices
    ranks = rt.empty(shape, contiguous_strides(shape), indices_spec.dtype)
    x, v, i, r = (t.reshape(1) if self.ndim == 0 else t.transpose(dim, -1)
                  for t in (self, values, indices, ranks))
    row = x._shape[-1]
    window("aten::sort.stable", {"inp": x}, {"desc": int(bool(descending))},
           [(r, _placed_index)], (row,), "sum", _rank_term, "int64")
    window("aten::sort.stable", {"inp": x, "rank": r}, {}, [(v, _placed_value),
                                                           (i, _placed_index)],
           (row,), "sum", _place_term, "int64")
    return values, indices


def topk(self, k, dim=-1, largest=True, sorted=True):
    """The first ``k`` of a stable sort (``sorted=False`` allows any order: this one)."""
    SO.topk.meta(self, k, dim, largest, sorted)
    values, indices = sort(self, True, dim, largest)
    if self.ndim == 0:
        return values, indices
    return clone(values.narrow(dim, 0, k)), clone(indices.narrow(dim, 0, k))


def kthvalue(self, k, dim=-1, keepdim=False):
    """The k-th smallest element along ``dim`` and its index (position k - 1 of the sort)."""
    SO.kthvalue.meta(self, k, dim, keepdim)
    values, indices = sort(self, True, dim, False)
    if self.ndim == 0:
        return values, indices
    picked = [clone(t.narrow(dim, k - 1, 1)) for t in (values, indices)]
    return tuple(t if keepdim else t.squeeze(dim) for t in picked)


def kernels() -> dict:
    return {SO.sort: sort, SO.topk: topk, SO.kthvalue: kthvalue}
