"""Split row loops: a pointwise SIMD loop over a row whose index divides the row into blocks
becomes a loop over the blocks around a SIMD loop over one block. cprinter.py prints the loop;
this module only rewrites its text, so a loop that is no such case stays as it was.

Note [Split row loops]: a reshape that merges two dims into a row (attention's heads back into
the model dim: ``[B, T, H, D] -> [B, T, H*D]`` read from ``[B, H, T, D]``) reads element ``r0``
of the row at ``((r0) / D)*stride + (r0) % D`` (lowering_views.py). gcc cannot vectorise a
load whose address is not an affine function of the loop variable, so the whole row ran
scalar: the tiny GPT's two head-merging kernels (q, k and v gradients into one [1024, 384]
buffer) 249 us each on one thread. Written as ``for y_hi { simd for y_lo < D }`` with
``r0 = y_hi * D + y_lo``, the quotient is ``y_hi`` and the remainder ``y_lo``: affine in the
vector loop's variable, 142 us. Only loops without a reduction clause (pointwise: each element
computed alone, the same operations either way) over a row of a whole number of blocks, whose
block is a whole number of 16-element vectors (every element in an AVX-512 lane, none in a
scalar tail), and whose index divides by one block size. Arithmetic and strata's own exp and
erf (inlined, explicit fmaf steps) give the scalar loop's bits; a libmvec function (tanh,
log, ...) now runs its vector variant where the scalar loop called libm's, so its values may
move within libmvec's documented 4 ulp (tests/compile/test_inductor_split_loops.py).
"""

import re

SPLIT_MIN_BLOCK = 16
_PRAGMA = "#pragma omp simd"
_ROW_LOOP = re.compile(r"^(\s*)for \(int64_t y = 0; y < (\d+); y\+\+\) \{$")
_ROW_INDEX = "const int64_t r0 = y;"
_QUOTIENT = re.compile(r"\(\(r0\) / (\d+)\)")
_REMAINDER = re.compile(r"\(r0\) % (\d+)\b")


def _block(body, row):
    """The one block size the row index ``r0`` is divided by in ``body``, or None."""
    text = "\n".join(body)
    sizes = {int(s) for s in _QUOTIENT.findall(text) + _REMAINDER.findall(text)}
    if len(sizes) != 1:
        return None
    (size,) = sizes
    if size % SPLIT_MIN_BLOCK or row % size or row == size:
        return None
    return size


def split_row_loops(lines):
    """``lines`` of a kernel with each splittable row loop split (Note [Split row loops])."""
    out, i = [], 0
    while i < len(lines):
        loop = _ROW_LOOP.match(lines[i + 1]) if i + 2 < len(lines) and \
            lines[i].strip() == _PRAGMA else None
        if loop is None or lines[i + 2].strip() != _ROW_INDEX:
            out.append(lines[i])
            i += 1
            continue
        indent, row = loop.group(1), int(loop.group(2))
        end = lines.index(f"{indent}}}", i + 3)
        body = lines[i + 3:end]
        size = _block(body, row)
        if size is None:
            out += lines[i:end + 1]
        else:
            out += [f"{indent}for (int64_t y_hi = 0; y_hi < {row // size}; y_hi++) {{",
                    f"{indent}{_PRAGMA}",
                    f"{indent}for (int64_t y_lo = 0; y_lo < {size}; y_lo++) {{",
                    f"{indent}    const int64_t y = y_hi * {size} + y_lo;",
                    f"{indent}    {_ROW_INDEX}",
                    *(_REMAINDER.sub("(y_lo)", _QUOTIENT.sub("(y_hi)", line)) for line in body),
                    f"{indent}}}}}"]
        i = end + 1
    return out
