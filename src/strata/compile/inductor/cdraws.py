"""The C printer's random draws (Note [Random draws] in ir.py): a ``RandomDraws`` node's chunk
jumps to its place of NumPy's PCG64 stream, then draws in SIMD lanes (Note [SIMD lanes] in
cpreamble.py), into the buffer or, with epilogues, into a stack array per row. Split from
cprinter.py, which calls these from ``print_kernel``."""

import math

from .half import HALF, c_load, c_store, c_stored
from .ir import C_TYPES


def _draw_text(node, bits, value=False):
    """The C element of ``node`` from the 53 random bits ``bits``: what its buffer stores, or
    with ``value`` the C value (a half draw rounded to its dtype, then widened to float, for a
    row array the epilogues read as values)."""
    if node.distribution == "bernoulli":
        # u < p  <=>  bits * 2^-53 < p  <=>  bits < ceil(p * 2^53): exact integer arithmetic
        drawn = f"{bits} < {math.ceil(node.params[0] * 2.0 ** 53)}ULL"
    else:
        # NumPy's random_uniform: lower + range * next_double, in double, then rounded (a half
        # dtype through float, as eager's ``cast_into``)
        lo, hi = node.params
        drawn = f"{float(lo)!r} + {float(hi) - float(lo)!r} * ((double){bits} * 0x1p-53)"
    if node.dtype in HALF:
        stored = c_stored(node.dtype, drawn)
        return c_load(node.dtype, stored) if value else stored
    return f"({C_TYPES[node.dtype]})({drawn})"


def _print_draws_start(node, first, lines):
    """Lines setting ``s0`` to the state of the stream's place ``offset + first`` (NumPy steps
    the state before each draw: place p is drawn from the state p + 1 steps on), and the
    lanes' jumps (Note [SIMD lanes] in cpreamble.py)."""
    lines += [
        f"    const strata_u128 inc = strata_pcg_words({node.state} + 2);",
        "    strata_pcg_lanes lanes;",
        "    strata_pcg_lanes_init(inc, &lanes);",
        f"    const uint64_t first = (uint64_t){node.offset}LL + (uint64_t)({first}) + 1;",
        f"    strata_u128 s0 = strata_pcg_jump(strata_pcg_words({node.state}), inc, first);",
    ]


def print_random_draws(node, lines):
    """Note [Random draws] (ir.py): this chunk jumps to its first place of the stream, then
    draws in SIMD lanes (Note [SIMD lanes] in cpreamble.py), so chunks may run on any thread
    and the values are the stream's, bit for bit."""
    _print_draws_start(node, "x_lo", lines)
    lines.append("    int64_t x = x_lo;")
    _print_lanes(node, node.name, "x", "x_hi", " " * 4, lines)


def _print_lanes(node, out, place, end, indent, lines, value=False):
    """The draws at places ``place`` to ``end`` into ``out[place]``, from ``s0`` (which holds
    ``place``'s state): STRATA_PCG_LANES lanes set from ``s0``, each stepping that many places,
    then the remainder from ``s0``, which is left at ``end`` (``value``: ``_draw_text``'s C
    values, not stored elements)."""
    drawn = _draw_text(node, "strata_pcg_bits53_halves(hi[l], lo[l])", value)
    lines += [
        f"{indent}uint64_t hi[STRATA_PCG_LANES], lo[STRATA_PCG_LANES];",
        f"{indent}#pragma omp simd",
        f"{indent}for (int l = 0; l < STRATA_PCG_LANES; l++) {{",
        f"{indent}    hi[l] = (uint64_t)(s0 >> 64);",
        f"{indent}    lo[l] = (uint64_t)s0;",
        f"{indent}    strata_pcg_muladd(&hi[l], &lo[l], lanes.mh[l], lanes.ml[l], lanes.ph[l], "
        "lanes.pl[l]);",
        f"{indent}}}",
        f"{indent}for (; {place} + STRATA_PCG_LANES <= {end}; {place} += STRATA_PCG_LANES) {{",
        f"{indent}    #pragma omp simd",
        f"{indent}    for (int l = 0; l < STRATA_PCG_LANES; l++) {{",
        f"{indent}        {out}[{place} + l] = {drawn};",
        f"{indent}        strata_pcg_muladd(&hi[l], &lo[l], lanes.step_mh, lanes.step_ml, "
        "lanes.step_ph, lanes.step_pl);",
        f"{indent}    }}",
        f"{indent}}}",
        f"{indent}s0 = ((strata_u128)hi[0] << 64) | lo[0];",
        f"{indent}for (; {place} < {end}; {place}++) {{",
        f"{indent}    {out}[{place}] = {_draw_text(node, 'strata_pcg_bits53(s0)', value)};",
        f"{indent}    s0 = s0 * STRATA_PCG_MULT + inc;",
        f"{indent}}}",
    ]


def print_row_draws_start(node, row, lines):
    """A draws kernel with epilogues (Note [Random draws]) walks rows of ``row`` elements:
    its chunk starts at place ``x_lo * row``; each row's draws go to a stack array."""
    _print_draws_start(node, f"x_lo * {row}", lines)
    lines.append(f"    {C_TYPES[node.dtype]} {node.name}_row[{row}];")


def print_row_draws(node, row, lines, stored):
    """Row x's draws into ``<name>_row`` (``stored``: copied to the buffer too), in lanes set
    from ``s0`` at each row, so that a row of any length leaves ``s0`` at the next row."""
    lines += ["        {", "            int64_t y = 0;"]
    _print_lanes(node, f"{node.name}_row", "y", row, " " * 12, lines, value=True)
    if stored:
        copy = c_store(node.dtype, f"{node.name}[x * {row} + y]", f"{node.name}_row[y]")
        lines += ["            #pragma omp simd", f"            for (y = 0; y < {row}; y++) {copy}"]
    lines.append("        }")
