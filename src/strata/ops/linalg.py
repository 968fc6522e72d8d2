"""Linear algebra, part 1: matrix products and contractions (factorizations: factorizations.py).

Primitives are the ops one BLAS call computes (``mm``, ``bmm``, ``addmm``) and ``einsum``;
everything else (``matmul``'s rank rules, ``mv``, ``dot``, ``outer``, ``baddbmm``, ``kron``,
``tensordot``, ``trace``, ``cross``, ``cdist``) decomposes into them, as in PyTorch's
``LinearAlgebra.cpp``. Products require equal dtypes (no promotion), like PyTorch's BLAS paths.
This file keeps ``matmul`` and the ``mv``/``dot`` it picks by rank; the other composites are in
``linalg_composites.py``.
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes
from . import factory as F
from . import meta_rules as R
from . import shape as S
from .op import TensorSpec, defop, register_decomposition

# The C++ type names PyTorch's BLAS dtype checks print ("float != double").
CTYPE = {D.float32: "float", D.float64: "double", D.float16: "c10::Half",
         D.bfloat16: "c10::BFloat16", D.int64: "long int", D.int32: "int", D.int16: "short int",
         D.int8: "signed char", D.uint8: "unsigned char", D.bool_: "bool",
         D.complex64: "c10::complex<float>", D.complex128: "c10::complex<double>"}


def _not_implemented(name, dt):
    raise NotImplementedError(f"\"{name}\" not implemented for '{R.type_name(dt)}'")


def blas_scalar(value, dtype):
    """alpha/beta as PyTorch uses them: truncated to an integer for integer dtypes."""
    return int(value) if dtype.category != D.FLOATING else value


# --- products (primitives) ------------------------------------------------------------------------

def _mm_meta(self, mat2):
    a, b = self._shape, mat2._shape   # plain tuples: this runs on every linear layer call
    if len(a) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a[1] != b[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and "
                           f"{b[0]}x{b[1]})")
    dt = self.dtype
    if dt is not mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {CTYPE[dt]} != "
                           f"{CTYPE[mat2.dtype]}")
    if dt is D.bool_:
        _not_implemented("addmm_impl_cpu_", dt)
    return TensorSpec((a[0], b[1]), dt)


def check_expandable(t, shape):
    """``t`` broadcasts to ``shape`` without changing it; else ``expand``'s own error."""
    own = t._shape
    if own == shape[len(shape) - len(own):]:   # trailing dims equal (a bias): nothing to check
        return
    fits = len(own) <= len(shape) and all(x == y or x == 1 for x, y in zip(reversed(own),
                                                                            reversed(shape)))
    if not fits:
        S.expand.meta(t, shape)


def _bmm_shape(batch1, batch2):
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, k = batch1.shape
    if tuple(batch2.shape[:2]) != (b, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    return (b, n, batch2.shape[2])


def _bmm_meta(self, mat2):
    shape = _bmm_shape(self, mat2)
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {R.type_name(self.dtype)} but found "
                           f"{R.type_name(mat2.dtype)}")
    if self.dtype is D.bool_:
        _not_implemented("bmm", self.dtype)
    return TensorSpec(shape, self.dtype)


def _addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    shape = _addmm_shape(self, mat1, mat2)
    check_expandable(self, shape)
    if mat2.dtype is D.bool_:
        _not_implemented("addmm_impl_cpu_", mat2.dtype)
    return TensorSpec(shape, mat2.dtype)


def _addmm_shape(self, mat1, mat2):
    """The checks ``addmm`` and ``addmm_`` share (dtypes, then the two matrices) and the
    product's shape; ``addmm_`` then checks it against ``self`` before any broadcasting."""
    dt = mat2.dtype
    if self.dtype is not dt:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{R.type_name(self.dtype)} and {R.type_name(dt)}")
    if mat1.dtype is not dt:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{R.type_name(mat1.dtype)} and {R.type_name(dt)}")
    a, b = mat1._shape, mat2._shape   # plain tuples: this runs on every linear layer call
    for name, shape in (("mat1", a), ("mat2", b)):
        if len(shape) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(shape)}-D tensor")
    if a[1] != b[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and "
                           f"{b[0]}x{b[1]})")
    return (a[0], b[1])


class EinsumSpec:
    """A parsed einsum equation with every label explicit (ellipsis dims get spare letters):
    ``equation`` is what NumPy runs, ``operand_shapes`` what each operand broadcasts to."""

    def __init__(self, equation, operand_shapes, out_shape):
        self.equation = equation
        self.operand_shapes = operand_shapes
        self.out_shape = out_shape


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_terms(equation):
    """Split ``equation`` into operand terms and the output term (None if implicit); each term
    is a list of letters, with ``...`` kept as one item."""
    arrow = equation.find("->")
    lhs_end = arrow if arrow >= 0 else len(equation)
    terms, cur, ellipsis, dots = [], [], False, 0
    for i, c in enumerate(equation):
        if i == lhs_end:
            terms.append(cur)
            cur, ellipsis, dots = [], False, 0
            continue
        if arrow >= 0 and i == lhs_end + 1:
            continue
        if c == " ":
            continue
        if c == "," and i < lhs_end:
            terms.append(cur)
            cur, ellipsis, dots = [], False, 0
        elif c == ".":
            if ellipsis:
                where = "output" if i > lhs_end else f"operand {len(terms)}"
                raise RuntimeError(f"einsum(): found '.' for {where} for which an ellipsis was "
                                   f"already found")
            dots += 1
            if dots == 3:
                cur.append("...")
                ellipsis, dots = True, 0
        elif c.isascii() and c.isalpha() and not dots:
            cur.append(c)
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
    if dots:
        raise RuntimeError("einsum(): found '.' that is not part of any ellipsis")
    if arrow < 0:
        terms.append(cur)
        return terms, None
    return terms, cur


def _broadcast_ellipsis(cur, new, operand):
    """Right-aligned broadcast of the dims the operands' ellipses cover."""
    n = max(len(cur), len(new))
    cur, new = (1,) * (n - len(cur)) + cur, (1,) * (n - len(new)) + new
    out = []
    for j, (a, b) in enumerate(zip(cur, new)):
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"einsum(): dimension {j} covered by ellipsis in operand "
                               f"{operand}has size {b} which does not broadcast with previously "
                               f"seen ellipsis with size {a} for the respective dimension")
        out.append(a if b == 1 else b)
    return tuple(out)


def parse_einsum(equation, shapes):
    """Validate ``equation`` against the operand ``shapes`` with PyTorch's messages."""
    terms, out_term = _einsum_terms(equation)
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    sizes, ell_shape = {}, ()
    n_ell = [0] * len(shapes)
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        n_labels = sum(c != "..." for c in term)
        if "..." in term:
            if n_labels > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({n_labels}) is more than the number of dimensions "
                                   f"({len(shape)}) for operand {i}")
            n_ell[i] = len(shape) - n_labels
        elif n_labels != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({n_labels}) does not match the number of dimensions "
                               f"({len(shape)}) for operand {i} and no ellipsis was given")
        dim, seen = 0, {}
        for c in term:
            if c == "...":
                ell_shape = _broadcast_ellipsis(ell_shape, tuple(shape[dim:dim + n_ell[i]]), i)
                dim += n_ell[i]
                continue
            size = shape[dim]
            dim += 1
            if c in seen and seen[c] != size:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the "
                                   f"sizes don't match, {size} != {seen[c]}")
            seen[c] = size
            prev = sizes.get(c)
            if prev is not None and prev != size and prev != 1 and size != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {size} for operand {i} "
                                   f"which does not broadcast with previously seen size {prev}")
            sizes[c] = size if prev is None or prev == 1 else prev
    if out_term is None:   # implicit output: the ellipsis, then labels seen once, sorted
        counts = {}
        for term in terms:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out_term = ["..."] + sorted(c for c, n in counts.items() if n == 1 and c != "...")
    else:
        for j, c in enumerate(out_term):
            if c != "..." and c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   f"equation for any input operand")
            if c in out_term[:j]:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   f"the output")
    # Ellipsis dims get spare letters, right-aligned across operands, so NumPy sees no '...'.
    spare = [c for c in _LETTERS if c not in sizes][:len(ell_shape)]
    sizes.update(zip(spare, ell_shape))

    def explicit(term, n):
        return "".join("".join(spare[len(spare) - n:]) if c == "..." else c for c in term)

    ins = [explicit(t, n) for t, n in zip(terms, n_ell)]
    out = explicit(out_term, len(spare))
    return EinsumSpec(",".join(ins) + "->" + out, [tuple(sizes[c] for c in t) for t in ins],
                      tuple(sizes[c] for c in out))


def einsum_check(equation, tensors):
    """The parsed equation and the result dtype (shared by the meta function and the kernel)."""
    spec = parse_einsum(equation, [tuple(t.shape) for t in tensors])
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dtype:
            raise RuntimeError(f"expected scalar type {R.type_name(dtype)} but found "
                               f"{R.type_name(t.dtype)}")
    if dtype is D.bool_:
        _not_implemented("bmm", dtype)
    return spec, dtype


def _einsum_meta(equation, tensors, path=None):
    spec, dtype = einsum_check(equation, tensors)
    return TensorSpec(spec.out_shape, dtype)


mm = defop("mm(Tensor self, Tensor mat2) -> Tensor", _mm_meta, method=True, function=True)
bmm = defop("bmm(Tensor self, Tensor mat2) -> Tensor", _bmm_meta, method=True, function=True)
addmm = defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
              "-> Tensor", _addmm_meta, method=True, function=True)
addmm_ = defop("addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
               "Scalar alpha=1) -> Tensor(a!)", method=True)
einsum = defop("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
               _einsum_meta)


# --- composites -----------------------------------------------------------------------------------
matmul = defop("matmul(Tensor self, Tensor other) -> Tensor", method=True, function=True)
mv = defop("mv(Tensor self, Tensor vec) -> Tensor", method=True, function=True)
dot = defop("dot(Tensor self, Tensor tensor) -> Tensor", method=True, function=True)


@register_decomposition(matmul)
def _matmul(self, other):
    """PyTorch's ``_matmul_impl``: dot / mv / mm by rank, folding the left operand's batch dims
    into one mm when the right one is a plain matrix/vector, else broadcast and use bmm."""
    d1, d2 = self.ndim, other.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(self, other)
    if d1 == 2 and d2 == 1:
        return mv(self, other)
    if d1 == 1 and d2 == 2:
        return S.squeeze(mm(S.unsqueeze(self, 0), other), (0,))
    if d1 == 2 and d2 == 2:
        return mm(self, other)
    if d1 >= 3 and d2 <= 2:
        # (..., n, k) @ (k[, m]): one mm over the folded batch.
        lead = tuple(self.shape[:-1])
        folded = S.reshape(self, (-1, self.shape[-1]))
        if d2 == 1:
            return S.reshape(mv(folded, other), lead)
        return S.view(mm(folded, other), lead + (other.shape[-1],))
    # A batched right operand is not folded (PyTorch would have to transpose the result and
    # copy it), so the result stays contiguous, as there.
    return _batched_matmul(self, other)


def _batched_matmul(a, b):
    n = a.shape[-2] if a.ndim > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if b.ndim > 1 else b.shape[-1]
    p = b.shape[-1] if b.ndim > 1 else 1
    batch = broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]) if b.ndim > 1 else ())
    nbatch = math.prod(batch)
    a3 = S.reshape(S.expand(a if a.ndim > 1 else S.unsqueeze(a, 0), batch + (n, m1)),
                   (nbatch, n, m1))
    b3 = S.reshape(S.expand(b if b.ndim > 1 else S.unsqueeze(b, -1), batch + (m2, p)),
                   (nbatch, m2, p))
    out = S.view(bmm(a3, b3), batch + (n, p))
    if a.ndim == 1:
        out = S.squeeze(out, (-2,))
    if b.ndim == 1:
        out = S.squeeze(out, (-1,))
    return out


def _check_mv(out_len, mat, vec, self_ndim=1):
    if mat.ndim != 2 or vec.ndim != 1 or self_ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self_ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or out_len not in (mat.shape[0], 1):
        raise RuntimeError(f"size mismatch, got input ({out_len}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")


def _check_addmv_dtypes(out_dtype, mat, vec):
    if not (out_dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{R.type_name(out_dtype)}, {R.type_name(mat.dtype)}, and "
                           f"{R.type_name(vec.dtype)}")
    if mat.dtype is D.bool_:
        _not_implemented("addmv_impl_cpu", mat.dtype)


def _mv_product(mat, vec):
    return S.squeeze(mm(mat, S.unsqueeze(vec, 1)), (1,))


@register_decomposition(mv)
def _mv(self, vec):
    _check_mv(self.shape[0] if self.ndim else 1, self, vec)
    _check_addmv_dtypes(vec.dtype, self, vec)
    return _mv_product(self, vec)


def _check_dot(self, other):
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{R.type_name(self.dtype)} and {R.type_name(other.dtype)}")
    if self.shape[0] != other.shape[0]:
        n, m = self.shape[0], other.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    if self.dtype is D.bool_:
        _not_implemented("dot", self.dtype)


@register_decomposition(dot)
def _dot(self, tensor):
    _check_dot(self, tensor)
    return S.reshape(mm(S.unsqueeze(self, 0), S.unsqueeze(tensor, 1)), ())


@register_decomposition(addmm_)
def _addmm_(self, mat1, mat2, beta=1, alpha=1):
    """``addmm`` written into ``self``: every check runs before the write, so a failed call
    leaves ``self`` as it was; autograd sees an addmm and a ``copy_``."""
    shape = _addmm_shape(self, mat1, mat2)
    if tuple(self.shape) != shape:
        have, want = (", ".join(map(str, s)) for s in (self.shape, shape))
        raise RuntimeError(f"Bad in-place call: input tensor size [{have}] and output tensor "
                           f"size [{want}] should match")
    R.check_no_internal_overlap(self)
    return F.copy_(self, addmm(self, mat1, mat2, beta=beta, alpha=alpha))
